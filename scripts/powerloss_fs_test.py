#!/usr/bin/python3
"""The power-loss filesystem's own test: it drops what was not synced and keeps what was.

Each test mounts scripts/powerloss_fs.py on a fresh directory (root and /dev/fuse needed; skipped
otherwise), writes through the mount, cuts, and reads the backing directory as the next mount would.
Run: /usr/bin/python3 scripts/powerloss_fs_test.py -v (FaultTests runs it in `swift test`).
"""

import errno
import json
import os
import subprocess
import tempfile
import time
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "powerloss_fs.py")


def sync_directory(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_file(path, data, sync):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, data)
        if sync:
            os.fdatasync(fd)
    finally:
        os.close(fd)


def read_file(path):
    with open(path, "rb") as file:
        return file.read()


@unittest.skipUnless(os.geteuid() == 0 and os.path.exists("/dev/fuse"), "needs root and /dev/fuse")
class PowerLossFilesystemTests(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory(prefix="powerloss-test-")
        self.backing = os.path.join(self.directory.name, "backing")
        self.mount = os.path.join(self.directory.name, "mount")
        self.control = os.path.join(self.directory.name, "control")
        os.mkdir(self.backing)
        os.mkdir(self.mount)
        with open(os.path.join(self.backing, "before"), "wb") as file:
            file.write(b"there at mount\n")
        self.process = subprocess.Popen(["/usr/bin/python3", SCRIPT, "mount", self.backing, self.mount,
                                         "--control", self.control, "--seed", "7"])
        deadline = time.monotonic() + 300
        while not os.path.ismount(self.mount):
            self.assertIsNone(self.process.poll(), "the filesystem exited before mounting")
            self.assertLess(time.monotonic(), deadline, "the filesystem did not mount")
            time.sleep(0.05)

    def tearDown(self):
        if self.process.poll() is None:
            subprocess.run(["fusermount", "-u", "-z", self.mount], check=False)
            self.process.wait(timeout=300)
        self.directory.cleanup()

    def tool(self, *words):
        result = subprocess.run(["/usr/bin/python3", SCRIPT, words[0], self.control, *words[1:]],
                                capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        return json.loads(result.stdout)

    def cut(self, torn=False):
        summary = self.tool("cut", *(["--torn"] if torn else []))
        self.process.wait(timeout=300)
        self.assertFalse(os.path.ismount(self.mount))
        print("cut:", summary)
        return summary

    def inside(self, name):
        return os.path.join(self.mount, name)

    def after(self, name):
        return os.path.join(self.backing, name)

    def test_synced_data_stays_and_unsynced_data_is_dropped(self):
        write_file(self.inside("journal"), b"record 1\n", sync=True)
        sync_directory(self.mount)
        write_file(self.inside("journal"), b"record 2\n", sync=False)
        self.assertEqual(read_file(self.inside("journal")), b"record 1\nrecord 2\n", "reads see unsynced data")
        self.assertEqual(self.tool("status")["unsynced_bytes"], 9)
        summary = self.cut()
        self.assertEqual(summary["unsynced_bytes"], 9)
        self.assertEqual(read_file(self.after("journal")), b"record 1\n")
        self.assertEqual(read_file(self.after("before")), b"there at mount\n")

    def test_an_unsynced_overwrite_of_synced_bytes_is_undone(self):
        path = self.inside("before")
        fd = os.open(path, os.O_WRONLY)
        os.pwrite(fd, b"THERE", 0)
        os.ftruncate(fd, 8)
        os.close(fd)
        self.assertEqual(read_file(path), b"THERE at")
        self.cut()
        self.assertEqual(read_file(self.after("before")), b"there at mount\n")

    def test_a_file_in_a_directory_never_synced_is_lost_even_if_its_data_was(self):
        write_file(self.inside("new"), b"data synced, entry not\n", sync=True)
        os.mkdir(self.inside("made"))
        write_file(self.inside("made/inner"), b"x\n", sync=True)
        sync_directory(self.inside("made"))
        summary = self.cut()
        self.assertEqual(sorted(os.listdir(self.backing)), ["before"])
        self.assertEqual(summary["lost_entries"], ["made", "new"])

    def test_a_synced_directory_keeps_its_entries_and_their_synced_data(self):
        os.mkdir(self.inside("made"))
        write_file(self.inside("made/inner"), b"kept\n", sync=True)
        sync_directory(self.inside("made"))
        sync_directory(self.mount)
        self.cut()
        self.assertEqual(read_file(self.after("made/inner")), b"kept\n")

    def test_an_unsynced_rename_is_undone_and_a_synced_one_kept(self):
        write_file(self.inside("epochs.tmp"), b"epoch 2\n", sync=True)
        sync_directory(self.mount)
        os.rename(self.inside("epochs.tmp"), self.inside("epochs"))
        os.rename(self.inside("before"), self.inside("moved"))
        sync_directory(self.mount)
        os.rename(self.inside("moved"), self.inside("moved again"))
        self.cut()
        self.assertEqual(sorted(os.listdir(self.backing)), ["epochs", "moved"])
        self.assertEqual(read_file(self.after("epochs")), b"epoch 2\n")

    def test_an_unsynced_unlink_and_a_rename_over_a_file_are_undone(self):
        write_file(self.inside("old"), b"old, durable\n", sync=True)
        write_file(self.inside("replacement"), b"new\n", sync=True)
        sync_directory(self.mount)
        os.rename(self.inside("replacement"), self.inside("old"))
        os.unlink(self.inside("before"))
        self.assertEqual(sorted(os.listdir(self.mount)), ["old"])
        self.cut()
        self.assertEqual(sorted(os.listdir(self.backing)), ["before", "old", "replacement"])
        self.assertEqual(read_file(self.after("old")), b"old, durable\n")
        self.assertEqual(read_file(self.after("before")), b"there at mount\n")

    def test_a_torn_cut_keeps_part_of_the_last_write(self):
        write_file(self.inside("before"), b"0123456789" * 50, sync=False)
        summary = self.cut(torn=True)
        kept = summary["torn"]["kept_bytes"]
        self.assertTrue(0 < kept < 500, summary)
        self.assertEqual(read_file(self.after("before")), b"there at mount\n" + (b"0123456789" * 50)[:kept])

    def test_a_partial_cut_keeps_a_prefix_of_each_files_unsynced_appends(self):
        write_file(self.inside("before"), b"abcdefghij" * 30, sync=False)
        write_file(self.inside("journal"), b"synced\n", sync=True)
        sync_directory(self.mount)
        write_file(self.inside("journal"), b"0123456789" * 30, sync=False)
        summary = self.tool("cut", "--partial")
        self.process.wait(timeout=300)
        print("cut:", summary)
        kept = summary["written_back"]
        self.assertEqual(read_file(self.after("before")), b"there at mount\n" + (b"abcdefghij" * 30)[:kept.get("before", 0)])
        self.assertEqual(read_file(self.after("journal")), b"synced\n" + (b"0123456789" * 30)[:kept.get("journal", 0)])

    def test_enospc_refuses_writes_until_switched_off(self):
        self.tool("enospc", "on")
        with self.assertRaises(OSError) as refused:
            write_file(self.inside("before"), b"more\n", sync=False)
        self.assertEqual(refused.exception.errno, errno.ENOSPC)
        self.assertEqual(read_file(self.inside("before")), b"there at mount\n", "reads still answer")
        self.tool("enospc", "off")
        write_file(self.inside("before"), b"more\n", sync=True)
        self.cut()
        self.assertEqual(read_file(self.after("before")), b"there at mount\nmore\n")


if __name__ == "__main__":
    unittest.main()
