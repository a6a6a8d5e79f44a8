"""The package installs with pip into a fresh virtual environment, and the example docs/clients.md shows
(examples/quickstart.py) runs as written against a real ``lyceum serve`` from there."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import unittest

from .support import PACKAGE, PYTHON, Serve, assert_guide_shows, run_example


class PackageTests(unittest.TestCase):
    def test_pip_installs_it_and_the_quickstart_runs_from_the_install(self) -> None:
        directory = tempfile.TemporaryDirectory(prefix="lyceum-venv-")
        self.addCleanup(directory.cleanup)
        venv = os.path.join(directory.name, "venv")
        # The system site holds Debian's pyzmq and setuptools, so nothing is downloaded.
        subprocess.run([PYTHON, "-m", "venv", "--system-site-packages", venv], check=True)
        python = os.path.join(venv, "bin", "python")
        # pip builds in the source tree; a copy keeps the build's files out of the repository.
        source = shutil.copytree(PACKAGE, os.path.join(directory.name, "source"),
                                 ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        install = subprocess.run([python, "-m", "pip", "install", "--no-index", "--no-build-isolation",
                                  "--disable-pip-version-check", "--quiet", source],
                                 capture_output=True, text=True, timeout=300)
        self.assertEqual(install.returncode, 0, install.stderr)

        serve = Serve(self)
        # Run from outside the repository so that only the installed package can be imported.
        environment = {**os.environ, "LYCEUM_ENDPOINT": serve.endpoint, "LYCEUM_EVENTS": serve.events}
        environment.pop("PYTHONPATH", None)
        where = subprocess.run([python, "-c", "import lyceum_client; print(lyceum_client.__file__)"],
                               cwd=directory.name, env=environment, capture_output=True, text=True, check=True)
        self.assertTrue(where.stdout.startswith(venv), where.stdout)
        self.assertEqual(run_example(self, python, "quickstart.py", environment, cwd=directory.name), [
            "created Dune version 1",
            "SwiftUI Essentials: 50% watched",
            "refused: conflict",
            "snapshot of 1 learners",
            "event lesson_watched 75%",
        ])


class ClientsGuideTests(unittest.TestCase):
    def test_the_clients_guide_shows_the_quickstart_as_it_is(self) -> None:
        assert_guide_shows(self, "## Python: `lyceum_client`", "quickstart.py")


if __name__ == "__main__":
    unittest.main()
