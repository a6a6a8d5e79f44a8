#!/usr/bin/python3
"""A power-loss filesystem for tests: what a disk holds after the power goes, as Jepsen's LazyFS.

    powerloss_fs.py mount BACKING MOUNTPOINT --control SOCKET [--seed N]   (runs until cut)
    powerloss_fs.py cut SOCKET [--torn|--partial]   drop what was not synced, unmount; prints what was lost
    powerloss_fs.py enospc SOCKET on|off     refuse (or allow again) writes, creates and mkdirs: ENOSPC
    powerloss_fs.py status SOCKET            unsynced files, bytes and directories, as JSON

Every operation passes through to BACKING at once, so reads see everything written, as a page cache
would. Beside it, the filesystem remembers what the disk would hold durably:

- File data: a file's contents as of its last fsync/fdatasync. Bytes written since (appended, or
  overwritten: the old bytes are kept aside as they are overwritten) are unsynced; so is a truncate.
  fdatasync counts as fsync (its size is data).
- Directory entries: each directory's entries as of its last fsync (of the directory itself). A file
  or directory created, renamed (away or in), linked or unlinked since is unsynced: a new file whose
  directory was never synced is gone after a cut, a renamed one is back under its old name, an
  unlinked one is back (its data is kept aside until its directory is synced).

`cut` is the power loss: from that instant every operation fails with EIO (a dead disk), then
BACKING is put back to the durable state above, the filesystem unmounts (lazily, so a process
still holding files does not hold the cut up: kill it first) and this process ends. SIGTERM after
an unmount ends it too (libfuse's handler). `--torn` also keeps a random part (seeded)
of the last write's unsynced bytes beyond the durable size of its file, within the page where they
start: a torn last page, the tail a journal's recovery must cut. `--partial` instead keeps, of every
file, a random prefix (seeded, possibly empty or whole) of the bytes appended since its last sync:
the pages a kernel had written back on its own before the power went, file by file in any order.

What it does not model: metadata other than sizes and entries (modes, owners and times pass through
and survive, as does a directory's own existence once its parent is synced); background writeback
(without `--partial`, nothing written since the last sync survives, however old: a kernel writes
dirty pages back within about 30 s); reordering within a file (any synced state is kept whole;
unsynced appends are lost whole, except the torn or partial prefix; unsynced overwrites are undone
whole); a disk that lies about
fsync, or fails it (EIO), or reads back corrupt sectors; memory-mapped writes the kernel has not yet
written back through FUSE; extended attributes, special files and locks (flock and fcntl locks are
the kernel's, local to the mount). The durable state is kept in this process's memory: if it dies
without a cut, BACKING holds everything, as after a clean shutdown. Every process on the mount runs
as root here (the filesystem is mounted with allow_other).

The state at mount is taken as durable. Python's fusepy (Debian python3-fusepy, libfuse2); its own
test is scripts/powerloss_fs_test.py.
"""

import argparse
import errno
import json
import os
import random
import shutil
import socket
import stat
import subprocess
import sys
import threading

HIDDEN = ".powerloss"  # BACKING/.powerloss: unlinked durable files, and the restore area; never shown
PAGE = 4096


class Unsynced:
    """A file's data since its last sync: its durable size and the durable bytes overwritten since."""

    def __init__(self, size):
        self.size = size
        self.now = size  # its size in BACKING
        self.undo = []  # (offset, old bytes), in the order they were overwritten


class PowerLossFS:
    """The passthrough operations (fusepy's Operations protocol) and the durable state beside them."""

    use_ns = True

    def __init__(self, backing, seed):
        self.backing = os.path.realpath(backing)
        self.hidden = os.path.join(self.backing, HIDDEN)
        self.kept = os.path.join(self.hidden, "kept")
        os.makedirs(self.kept, exist_ok=True)
        self.random = random.Random(seed)
        self.mutex = threading.RLock()
        self.dead = False
        self.enospc = False
        self.files = {}  # inode -> Unsynced, for files with unsynced data
        self.last_write = None  # (inode, offset, length) of the latest write
        self.tokens = {}  # a live directory's inode -> its token (inode numbers of removed directories are reused)
        self.next_token = 0
        self.durable = {}  # directory token -> {name: ("f", inode) | ("d", token) | ("l", target)}
        self.root = self._token(os.lstat(self.backing).st_ino)
        self._take_durable_tree(self.backing, self.root)

    # ---- the durable namespace ----

    def _token(self, inode):
        if inode not in self.tokens:
            self.tokens[inode] = self.next_token
            self.next_token += 1
        return self.tokens[inode]

    def _entries(self, directory):
        """The entries `directory` holds now, as the durable map holds them."""
        entries = {}
        for name in os.listdir(directory):
            if directory == self.backing and name == HIDDEN:
                continue
            path = os.path.join(directory, name)
            info = os.lstat(path)
            if stat.S_ISDIR(info.st_mode):
                entries[name] = ("d", self._token(info.st_ino))
            elif stat.S_ISLNK(info.st_mode):
                entries[name] = ("l", os.readlink(path))
            else:
                entries[name] = ("f", info.st_ino)
        return entries

    def _take_durable_tree(self, directory, token):
        self.durable[token] = self._entries(directory)
        for name, (kind, value) in self.durable[token].items():
            if kind == "d":
                self._take_durable_tree(os.path.join(directory, name), value)

    def _durable_inodes(self):
        return {value for entries in self.durable.values() for kind, value in entries.values() if kind == "f"}

    def _keep_if_durable(self, path):
        """Before `path` leaves the namespace: a hard link aside if a durable entry names its inode."""
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(info.st_mode):
            self.tokens.pop(info.st_ino, None)
            return
        if stat.S_ISLNK(info.st_mode):
            return
        if info.st_ino in self._durable_inodes():
            aside = os.path.join(self.kept, str(info.st_ino))
            if not os.path.exists(aside):
                os.link(path, aside)
        elif info.st_nlink == 1:
            self.files.pop(info.st_ino, None)

    def _drop_unreferenced_kept(self):
        durable = self._durable_inodes()
        for name in os.listdir(self.kept):
            if int(name) not in durable:
                os.unlink(os.path.join(self.kept, name))

    # ---- file data ----

    def _unsynced(self, fd):
        info = os.fstat(fd)
        if info.st_ino not in self.files:
            self.files[info.st_ino] = Unsynced(info.st_size)
        return info.st_ino, self.files[info.st_ino]

    def _truncate(self, fd, length):
        _, record = self._unsynced(fd)
        self._save_overwritten(fd, record, length, record.now)
        os.ftruncate(fd, length)
        record.now = length

    def _save_overwritten(self, fd, record, offset, end):
        end = min(end, record.size)
        if offset < end:
            record.undo.append((offset, os.pread(fd, end - offset, offset)))

    # ---- fusepy operations ----

    def __call__(self, op, *args):
        with self.mutex:
            if self.dead:
                raise OSError(errno.EIO, "power lost")
            if not hasattr(self, op):
                raise OSError(errno.ENOSYS, op)
            if args and isinstance(args[0], str) and self._is_hidden(args[0]):
                raise OSError(errno.ENOENT, args[0])
            return getattr(self, op)(*args)

    def _is_hidden(self, path):
        return path == "/" + HIDDEN or path.startswith("/" + HIDDEN + "/")

    def _full(self, path):
        return os.path.normpath(os.path.join(self.backing, path.lstrip("/")))

    def _refuse_if_full(self):
        if self.enospc:
            raise OSError(errno.ENOSPC, "no space (powerloss_fs enospc on)")

    def access(self, path, mode):
        if not os.access(self._full(path), mode):
            raise OSError(errno.EACCES, path)

    def chmod(self, path, mode):
        os.chmod(self._full(path), mode)

    def chown(self, path, uid, gid):
        os.chown(self._full(path), uid, gid)

    def getattr(self, path, fh=None):
        info = os.lstat(self._full(path))
        return {key: getattr(info, key) for key in ("st_blocks", "st_gid", "st_mode", "st_nlink", "st_size", "st_uid")} | {
            "st_atime": info.st_atime_ns, "st_ctime": info.st_ctime_ns, "st_mtime": info.st_mtime_ns}

    def readdir(self, path, fh):
        names = os.listdir(self._full(path))
        if path == "/":
            names = [name for name in names if name != HIDDEN]
        return [".", ".."] + names

    def readlink(self, path):
        return os.readlink(self._full(path))

    def statfs(self, path):
        info = os.statvfs(self._full(path))
        return {key: getattr(info, key) for key in (
            "f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")}

    def utimens(self, path, times=None):
        os.utime(self._full(path), ns=times)

    def mkdir(self, path, mode):
        self._refuse_if_full()
        full = self._full(path)
        os.mkdir(full, mode)
        token = self._token(os.lstat(full).st_ino)
        self.durable[token] = {}

    def rmdir(self, path):
        full = self._full(path)
        self._keep_if_durable(full)
        os.rmdir(full)

    def symlink(self, target, source):
        self._refuse_if_full()
        os.symlink(source, self._full(target))

    def link(self, target, source):
        os.link(self._full(source), self._full(target))

    def unlink(self, path):
        full = self._full(path)
        self._keep_if_durable(full)
        os.unlink(full)

    def rename(self, old, new):
        self._keep_if_durable(self._full(new))
        os.rename(self._full(old), self._full(new))

    def fsyncdir(self, path, datasync, fh):
        full = self._full(path)
        self.durable[self._token(os.lstat(full).st_ino)] = self._entries(full)
        self._drop_unreferenced_kept()
        return 0

    def create(self, path, mode, fi=None):
        self._refuse_if_full()
        full = self._full(path)
        existed = os.path.lexists(full)
        fd = os.open(full, os.O_RDWR | os.O_CREAT, mode)
        if existed:
            self._truncate(fd, 0)
        else:
            # A new file: nothing of it is durable (and its inode may be a removed file's).
            self.files[os.fstat(fd).st_ino] = Unsynced(0)
        return fd

    def open(self, path, flags):
        # Read-write whenever writing, so that overwritten bytes can be read first; never O_APPEND,
        # which would make pwrite ignore the offset the kernel already chose.
        writes = flags & os.O_ACCMODE != os.O_RDONLY
        fd = os.open(self._full(path), os.O_RDWR if writes else os.O_RDONLY)
        if flags & os.O_TRUNC:
            self._truncate(fd, 0)
        return fd

    def truncate(self, path, length, fh=None):
        fd = fh if fh is not None else os.open(self._full(path), os.O_RDWR)
        try:
            self._truncate(fd, length)
        finally:
            if fh is None:
                os.close(fd)

    def read(self, path, size, offset, fh):
        return os.pread(fh, size, offset)

    def write(self, path, data, offset, fh):
        self._refuse_if_full()
        inode, record = self._unsynced(fh)
        self._save_overwritten(fh, record, offset, offset + len(data))
        written = os.pwrite(fh, data, offset)
        record.now = max(record.now, offset + written)
        self.last_write = (inode, offset, written)
        return written

    def fsync(self, path, datasync, fh):
        self.files.pop(os.fstat(fh).st_ino, None)
        return 0

    def flush(self, path, fh):
        return 0

    def release(self, path, fh):
        os.close(fh)
        return 0

    # ---- control ----

    def status(self):
        with self.mutex:
            return {"unsynced_files": len(self.files),
                    "unsynced_bytes": sum(self._unsynced_bytes(inode) for inode in self.files),
                    "dead": self.dead, "enospc": self.enospc}

    def _unsynced_bytes(self, inode):
        record = self.files[inode]
        return sum(len(old) for _, old in record.undo) + max(0, record.now - record.size)

    def cut(self, torn, partial=False):
        """The power loss: every operation fails from now; BACKING goes back to its durable state."""
        with self.mutex:
            self.dead = True
            live = {}
            for directory, names, files in os.walk(self.backing):
                if directory == self.backing:
                    names[:] = [name for name in names if name != HIDDEN]
                for name in files + [name for name in names if os.path.islink(os.path.join(directory, name))]:
                    path = os.path.join(directory, name)
                    live.setdefault(os.lstat(path).st_ino, path)
            for name in os.listdir(self.kept):
                live.setdefault(int(name), os.path.join(self.kept, name))
            summary = {"unsynced_files": len(self.files),
                       "unsynced_bytes": sum(self._unsynced_bytes(inode) for inode in self.files),
                       "lost_entries": self._lost_entries(self.backing, self.root, "")}
            restore = os.path.join(self.hidden, "restore")
            shutil.rmtree(restore, ignore_errors=True)
            os.mkdir(restore)
            torn_kept = self._torn_bytes(live) if torn else None
            written_back = self._written_back(live) if partial else []
            self._build(self.root, restore, live)
            restored = {}
            for directory, _, files in os.walk(restore):
                for name in files:
                    path = os.path.join(directory, name)
                    restored.setdefault(os.lstat(path).st_ino, path)
            for inode, record in self.files.items():
                if inode in restored:
                    with open(restored[inode], "r+b") as file:
                        file.truncate(record.size)
                        for offset, old in reversed(record.undo):
                            os.pwrite(file.fileno(), old, offset)
            kept = {}
            for inode, offset, data in written_back:
                if inode in restored and data:
                    with open(restored[inode], "r+b") as file:
                        os.pwrite(file.fileno(), data, offset)
                    kept[os.path.relpath(restored[inode], restore)] = len(data)
            if partial:
                summary["written_back"] = kept
            if torn_kept is not None:
                inode, offset, data = torn_kept
                if inode in restored:
                    with open(restored[inode], "r+b") as file:
                        os.pwrite(file.fileno(), data, offset)
                    summary["torn"] = {"path": os.path.relpath(restored[inode], restore), "kept_bytes": len(data),
                                       "at": offset}
            for name in os.listdir(self.backing):
                if name == HIDDEN:
                    continue
                path = os.path.join(self.backing, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
            for name in os.listdir(restore):
                os.rename(os.path.join(restore, name), os.path.join(self.backing, name))
            shutil.rmtree(self.hidden)
            return summary

    def _lost_entries(self, directory, token, prefix):
        """The paths whose entries differ between now and the durable state (created, removed, moved)."""
        lost = []
        now = self._entries(directory) if os.path.isdir(directory) else {}
        durable = self.durable.get(token, {})
        for name in sorted(set(now) | set(durable)):
            if now.get(name) != durable.get(name):
                lost.append(prefix + name)
            elif now[name][0] == "d":
                lost += self._lost_entries(os.path.join(directory, name), now[name][1], prefix + name + "/")
        return lost

    def _torn_bytes(self, live):
        """Part of the latest write's unsynced tail, within its first page: (inode, offset, bytes) or None."""
        if self.last_write is None:
            return None
        inode, offset, length = self.last_write
        record = self.files.get(inode)
        if record is None or inode not in live or offset + length <= record.size:
            return None
        start = max(offset, record.size)
        page_end = (start // PAGE + 1) * PAGE
        end = min(offset + length, page_end, record.now)
        if end - start < 2:
            return None
        keep = self.random.randrange(1, end - start)
        with open(live[inode], "rb") as file:
            return inode, start, os.pread(file.fileno(), keep, start)

    def _written_back(self, live):
        """Of every file with unsynced appended bytes, a random prefix of them: [(inode, offset, bytes)]."""
        chosen = []
        for inode, record in sorted(self.files.items()):
            if inode in live and record.now > record.size:
                keep = self.random.randrange(0, record.now - record.size + 1)
                with open(live[inode], "rb") as file:
                    chosen.append((inode, record.size, os.pread(file.fileno(), keep, record.size)))
        return chosen

    def _build(self, token, directory, live):
        for name, (kind, value) in self.durable.get(token, {}).items():
            path = os.path.join(directory, name)
            if kind == "d":
                os.mkdir(path)
                self._build(value, path, live)
            elif kind == "l":
                os.symlink(value, path)
            else:
                os.link(live[value], path)


def serve_control(fs, socket_path, mountpoint):
    """Answers control commands on a Unix socket, one line each; after `cut`, unmounts."""
    if os.path.exists(socket_path):
        os.unlink(socket_path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(socket_path)
    server.listen(4)
    while True:
        connection, _ = server.accept()
        with connection:
            words = connection.makefile("r").readline().split()
            command = words[0] if words else ""
            if command == "cut":
                try:
                    reply = fs.cut(torn="torn" in words[1:], partial="partial" in words[1:])
                except OSError as error:
                    reply = {"error": "the restore failed, BACKING is in between: %s" % error}
            elif command == "enospc" and words[1:] in (["on"], ["off"]):
                with fs.mutex:
                    fs.enospc = words[1] == "on"
                reply = fs.status()
            elif command == "status":
                reply = fs.status()
            else:
                reply = {"error": "unknown command %r (cut [torn|partial], enospc on|off, status)" % " ".join(words)}
            connection.sendall((json.dumps(reply) + "\n").encode())
            if command == "cut":
                server.close()
                os.unlink(socket_path)
                subprocess.run(["fusermount", "-u", "-z", mountpoint], check=False)
                # Other mount namespaces (every `ip netns exec` copies the mounts it finds) may still
                # hold the mount, and it would stay served until they end: the power is off, so end
                # now. Their copies then answer ENOTCONN, as a dead disk.
                os._exit(0)


def ask(socket_path, line):
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(socket_path)
    with client:
        client.sendall((line + "\n").encode())
        return client.makefile("r").readline().strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True)
    mount = verbs.add_parser("mount")
    mount.add_argument("backing")
    mount.add_argument("mountpoint")
    mount.add_argument("--control", required=True)
    mount.add_argument("--seed", type=int, default=None)
    cut = verbs.add_parser("cut")
    cut.add_argument("control")
    how = cut.add_mutually_exclusive_group()
    how.add_argument("--torn", action="store_true")
    how.add_argument("--partial", action="store_true")
    enospc = verbs.add_parser("enospc")
    enospc.add_argument("control")
    enospc.add_argument("switch", choices=["on", "off"])
    status = verbs.add_parser("status")
    status.add_argument("control")
    arguments = parser.parse_args()
    if arguments.verb == "mount":
        import fusepy
        seed = arguments.seed if arguments.seed is not None else random.randrange(1 << 31)
        fs = PowerLossFS(arguments.backing, seed)
        control = threading.Thread(target=serve_control, args=(fs, arguments.control, arguments.mountpoint), daemon=True)
        control.start()
        print("powerloss_fs: %s on %s, control %s, seed %d" % (fs.backing, arguments.mountpoint, arguments.control, seed),
              file=sys.stderr, flush=True)
        # hard_remove: unlink a file still open at once, as a disk does (not renamed to .fuse_hidden*).
        fusepy.FUSE(fs, arguments.mountpoint, foreground=True, allow_other=True, big_writes=True, hard_remove=True,
                    fsname="powerloss")
    else:
        line = arguments.verb
        if arguments.verb == "cut" and arguments.torn:
            line += " torn"
        if arguments.verb == "cut" and arguments.partial:
            line += " partial"
        if arguments.verb == "enospc":
            line += " " + arguments.switch
        reply = ask(arguments.control, line)
        print(reply)
        sys.exit(1 if "error" in json.loads(reply) else 0)


if __name__ == "__main__":
    main()
