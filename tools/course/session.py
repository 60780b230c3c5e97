"""What most commands start with: the repository root, the backend, its tools, and the
student's build folder ``build/<backend>``."""
import os
from dataclasses import dataclass

from .backend import Toolchain, check_prerequisites, resolve_backend
from .build import BuildDir

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass
class Session:
    root: str
    backend: str
    toolchain: Toolchain

    def build_dir(self, name: str = None) -> BuildDir:
        return BuildDir(self.root, os.path.join(self.root, "build", name or self.backend), self.toolchain)


def open_session(requested_backend: str = None, root: str = ROOT) -> Session:
    backend = resolve_backend(requested_backend)
    return Session(root=root, backend=backend, toolchain=check_prerequisites(backend, root))
