#!/usr/bin/env python3
"""`fatbinary` for the CUDA 12 toolkit tree that scripts/cuda12-toolkit assembles from PyPI wheels.

The cu12 nvcc wheel ships ptxas and libdevice but no nvcc driver, cicc or fatbinary, so the tree is
compiled with clang (docs/install.md, "CUDA 12"). clang runs `fatbinary -64 --create OUT
--image=profile=sm_XX,file=CUBIN --image=profile=compute_XX,file=PTX` to bundle what ptxas made;
this script does the same through NVIDIA's libnvfatbin (nvidia-nvfatbin-cu12, beside it in lib64).
Exit 2 on an option it does not know (naming it), 3 when libnvfatbin refuses an image.
"""

import ctypes
import os
import sys

USAGE = "usage: fatbinary -64 --create OUT --image=profile=sm_XX|compute_XX,file=PATH ..."


def parse(argv):
    """(output path, [(kind, arch, path)]) from clang's fatbinary command line; ValueError names a bad option."""
    out, images, i = None, [], 0
    while i < len(argv):
        a = argv[i]
        if a in ("-64", "--64", "--cuda", "-cuda", "-g", "--g"):
            pass
        elif a in ("--create", "-create"):
            i += 1
            if i == len(argv):
                raise ValueError(f"{a} needs a file")
            out = argv[i]
        elif a.startswith("--create="):
            out = a.split("=", 1)[1]
        elif a.startswith("--image=") or a.startswith("-image="):
            fields = dict(kv.split("=", 1) for kv in a.split("=", 1)[1].split(",") if "=" in kv)
            profile, path = fields.get("profile", ""), fields.get("file", "")
            kind, _, arch = profile.partition("_")
            if kind not in ("sm", "compute") or not arch or not path:
                raise ValueError(f"{a}: expected profile=sm_XX or compute_XX and file=PATH")
            images.append((kind, arch, path))
        else:
            raise ValueError(f"unknown option {a!r}")
        i += 1
    if out is None or not images:
        raise ValueError("--create and at least one --image are required")
    return out, images


def library():
    here = os.path.dirname(os.path.realpath(__file__))
    path = os.environ.get("CB_NVFATBIN", os.path.join(here, "..", "lib64", "libnvfatbin.so.12"))
    return ctypes.CDLL(path)


def build(lib, images):
    handle = ctypes.c_void_p()
    opts = (ctypes.c_char_p * 2)(b"-64", b"-host=linux")
    check(lib, lib.nvFatbinCreate(ctypes.byref(handle), opts, ctypes.c_size_t(2)), "nvFatbinCreate")
    try:
        for kind, arch, path in images:
            with open(path, "rb") as f:
                data = f.read()
            ident = os.path.basename(path).encode()
            if kind == "sm":
                rc = lib.nvFatbinAddCubin(handle, data, ctypes.c_size_t(len(data)), arch.encode(), ident)
            else:
                data += b"\0"
                rc = lib.nvFatbinAddPTX(handle, data, ctypes.c_size_t(len(data)), arch.encode(), ident, b"")
            check(lib, rc, f"adding {path} ({kind}_{arch})")
        size = ctypes.c_size_t()
        check(lib, lib.nvFatbinSize(handle, ctypes.byref(size)), "nvFatbinSize")
        buf = ctypes.create_string_buffer(size.value)
        check(lib, lib.nvFatbinGet(handle, buf), "nvFatbinGet")
        return buf.raw
    finally:
        lib.nvFatbinDestroy(ctypes.byref(handle))


def check(lib, rc, what):
    if rc != 0:
        lib.nvFatbinGetErrorString.restype = ctypes.c_char_p
        raise RuntimeError(f"{what}: {lib.nvFatbinGetErrorString(rc).decode()}")


def main(argv):
    try:
        out, images = parse(argv)
    except ValueError as e:
        print(f"fatbinary (collbench, libnvfatbin): {e}\n{USAGE}", file=sys.stderr)
        return 2
    try:
        blob = build(library(), images)
    except (OSError, RuntimeError) as e:
        print(f"fatbinary (collbench, libnvfatbin): {e}", file=sys.stderr)
        return 3
    with open(out, "wb") as f:
        f.write(blob)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
