"""The compilers and test runners of the polyglot languages, found where `make
toolchains` installs them, as a run's sandboxes bind them and its manifest records them.

A toolchain is found on the trusted side before any sandbox starts: its folders (bound
read-only into every sandbox of the run), its version as it prints it, and the SHA-256
of its main binaries (as the manifest records bubblewrap's). Nothing is installed or
fetched here; a toolchain that is missing is a ConfigError that says to run `make
toolchains`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from codetrial.config import toolchains_dir
from codetrial.errors import ConfigError
from codetrial.sandbox import Mounts, SandboxPolicy

SYSTEM_PROGRAMS = "/usr/bin:/bin"
BUILD_PROCESSES = 256
_INSTALL = "install it with `make toolchains` (Debian's packages and, for JavaScript, npm's)"


@dataclass(frozen=True)
class Toolchain:
    """A language's toolchain: `folders` bound read-only into the sandbox, `path` the
    folders of its programs as a step's PATH lists them, `version` as its compiler
    prints it, `binaries` path -> SHA-256 of its main programs, and `env` what its
    steps need set, and `links` (workspace path -> target) what each workspace sees
    of it where its build looks (JavaScript's node_modules), and `libraries` what its
    builds link besides their own objects (Catch2's main, built once)."""

    language: str
    version: str
    folders: tuple[Path, ...]
    path: tuple[Path, ...]
    binaries: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    libraries: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {"version": self.version, "sha256": dict(self.binaries)}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _printed(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ConfigError(f"{argv[0]} does not run ({exc}); {_INSTALL}") from exc
    return (done.stdout or done.stderr).strip().splitlines()[0]


def _program(name: str, language: str) -> Path:
    found = shutil.which(name, path=SYSTEM_PROGRAMS)
    if found is None:
        raise ConfigError(
            f"the {language} toolchain is not installed ({name} not found); {_INSTALL}"
        )
    return Path(os.path.realpath(found))


def _go() -> Toolchain:
    """Debian's golang-go: GOROOT under /usr/lib, its sources under /usr/share. Its
    standard library comes compiled in GOROOT, so a run builds only its own package."""
    go = _program("go", "Go")
    root = go.parent.parent
    sources = Path(os.path.realpath(root / "src")).parent
    tools = root / "pkg" / "tool" / "linux_amd64"
    binaries = [go, tools / "compile", tools / "link", tools / "test2json"]
    return Toolchain(
        language="go",
        version=_printed([str(go), "version"]),
        folders=tuple(dict.fromkeys([root, sources])),
        path=(go.parent,),
        binaries={str(b): _sha256(b) for b in binaries if b.is_file()},
        env={"GOROOT": str(root)},
    )


def _javascript() -> Toolchain:
    """The machine's Node and, from `make toolchains`, Jest with Babel: one
    node_modules every exercise shares, read-only."""
    node = _program("node", "JavaScript")
    modules = toolchains_dir() / "node" / "node_modules"
    jest = modules / "jest" / "bin" / "jest.js"
    if not jest.is_file():
        raise ConfigError(f"JavaScript's test runner is not installed ({jest}); {_INSTALL}")
    package = json.loads((modules / "jest" / "package.json").read_text(encoding="utf-8"))
    return Toolchain(
        language="javascript",
        version=f"node {_printed([str(node), '--version'])}, jest {package['version']}",
        folders=(node, modules.parent),
        path=(node.parent,),
        binaries={str(node): _sha256(node), str(jest): _sha256(jest)},
        links={"node_modules": str(modules)},
    )


def _rust() -> Toolchain:
    """Debian's rustc and cargo, the C compiler that links for them, and Debian's crates
    (a registry in a folder, which cargo reads offline). Each exercise builds its crates
    afresh: three of thirty use any."""
    cargo, rustc = _program("cargo", "Rust"), _program("rustc", "Rust")
    registry = Path("/usr/share/cargo/registry")
    drivers = sorted(Path("/usr/lib").glob("*/librustc_driver-*.so"))
    # The linker, `cc`, is Debian's alternative for the C compiler.
    linking = [Path("/usr/lib/gcc"), Path("/etc/alternatives")]
    folders = [cargo.parent, Path("/usr/lib/rustlib"), *linking, registry]
    missing = [str(folder) for folder in folders if not folder.is_dir()]
    if missing:
        raise ConfigError(f"the Rust toolchain is incomplete ({', '.join(missing)}); {_INSTALL}")
    return Toolchain(
        language="rust",
        version=f"{_printed([str(rustc), '--version'])}, {_printed([str(cargo), '--version'])}",
        folders=tuple(folders),
        path=(cargo.parent,),
        binaries={str(b): _sha256(b) for b in [cargo, rustc, *drivers]},
        # Stripped of debug information (Debian's standard library carries its own), a
        # test binary is a megabyte or two, well under the sandbox's file size limit.
        env={
            "CARGO_HOME": "/tmp/cargo-home",
            "RUST_BACKTRACE": "0",
            "CARGO_PROFILE_DEV_DEBUG": "0",
            "CARGO_PROFILE_DEV_STRIP": "debuginfo",
        },
    )


def _cpp() -> Toolchain:
    """Debian's g++ with Catch2 2's header and Boost.Date_Time, and Catch2's main as
    `make toolchains` compiled it once: each exercise compiles only its own code and
    its tests."""
    compiler = _program("g++", "C++")
    main = toolchains_dir() / "catch2" / "main.o"
    header = Path("/usr/include/catch2/catch.hpp")
    if not main.is_file() or not header.is_file():
        raise ConfigError(f"Catch2 is not installed ({main}, {header}); {_INSTALL}")
    return Toolchain(
        language="cpp",
        version=f"{_printed([str(compiler), '--version'])}, Catch2 2 ({header})",
        folders=(
            compiler.parent,
            Path("/usr/lib/gcc"),
            Path("/usr/include"),
            Path("/etc/alternatives"),
            main.parent,
        ),
        path=(compiler.parent,),
        binaries={str(b): _sha256(b) for b in (compiler, header, main)},
        # Boost.Date_Time, which two exercises use, linked only where it is used.
        libraries=(str(main), "-Wl,--as-needed", "-lboost_date_time"),
    )


def _java() -> Toolchain:
    """Debian's JDK with JUnit 5 (its console launcher) and AssertJ, no Gradle: each
    exercise is compiled with javac and run by the launcher."""
    javac = _program("javac", "Java")
    home = javac.parent.parent
    jars = Path("/usr/share/java")
    console = jars / "junit-platform-console-standalone.jar"
    libraries = [jars / "junit-jupiter-api.jar", jars / "junit-jupiter-params.jar"]
    libraries += [jars / "assertj-core.jar", jars / "apiguardian-api.jar", jars / "opentest4j.jar"]
    missing = [str(jar) for jar in [console, *libraries] if not jar.is_file()]
    if missing:
        raise ConfigError(f"Java's test libraries are missing ({', '.join(missing)}); {_INSTALL}")
    # The JDK's configuration is Debian's, under /etc.
    settings = Path("/etc") / home.name.removesuffix("-amd64")
    return Toolchain(
        language="java",
        version=_printed([str(home / "bin" / "java"), "-version"]),
        folders=(home, jars, settings, Path("/etc/alternatives")),
        path=(home / "bin",),
        binaries={str(b): _sha256(b) for b in (javac, home / "bin" / "java", console)},
        env={
            "JUNIT_CONSOLE": str(console),
            "JAVA_TOOL_OPTIONS": "-Xmx512m -XX:+UseSerialGC",
        },
        libraries=tuple(str(jar) for jar in libraries),
    )


_FINDERS: dict[str, Callable[[], Toolchain]] = {
    "go": _go,
    "javascript": _javascript,
    "rust": _rust,
    "cpp": _cpp,
    "java": _java,
}


def building(policy: SandboxPolicy, toolchains: Sequence[Toolchain]) -> SandboxPolicy:
    """`policy` for sandboxes that build and test with `toolchains`: their folders bound
    read-only, and room in each sandbox's cgroup for the processes and threads of a
    compiler or a test runner (Node's worker threads, a test that starts Node)."""
    if not toolchains:
        return policy
    folders = tuple(folder for toolchain in toolchains for folder in toolchain.folders)
    processes = max(policy.limits.max_processes, BUILD_PROCESSES)
    limits = policy.limits.model_copy(update={"max_processes": processes})
    return dataclasses.replace(policy, limits=limits).with_mounts(Mounts(folders=folders))


@functools.cache
def find_toolchain(language: str) -> Toolchain:
    """`language`'s toolchain; a ConfigError when it is missing or not yet supported."""
    finder = _FINDERS.get(language)
    if finder is None:
        raise ConfigError(
            f"{language} exercises cannot be judged yet: codetrial runs the tests of "
            f"{', '.join(sorted(['python', *_FINDERS]))} exercises"
        )
    return finder()
