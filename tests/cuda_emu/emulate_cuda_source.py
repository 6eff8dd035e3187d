#!/usr/bin/env python3
"""Rewrites a CUDA source (.cu or .cuh) as host C++ for the CUDA emulator (tests/cuda_emu/cuda_emu.h).

Only what C++ cannot parse changes; every other line is the kernel source as nvcc compiles it:
- `kernel<<<grid, block, shared, stream>>>(args)` becomes `::izwi_emu::launch(kernel, grid, block,
  shared, stream, args)`;
- `extern __shared__ T name[];` becomes a pointer to the launch's dynamic shared memory;
- `__shared__ T a[N], b;` becomes references to block-shared storage (`::izwi_emu::shared_var`).
A .cu file also includes the emulator's header first.

Usage: emulate_cuda_source.py INPUT OUTPUT
"""

import re
import sys
import zlib

LAUNCH = re.compile(r"([A-Za-z_][\w:]*(?:<[^;{}]*?>)?)\s*<<<(.*?)>>>\s*\(", re.DOTALL)
DYNAMIC_SHARED = re.compile(r"extern\s+__shared__\s+([^;]+?)\s+(\w+)\s*\[\s*\]\s*;")
SHARED = re.compile(r"__shared__\s+([^;]+);")
DECLARATOR = re.compile(r"^(.*?)(\w+)\s*((?:\[[^\]]*\]\s*)*)$", re.DOTALL)


def launch(match):
    config = match.group(2).strip()
    if config.count(",") < 3 and "(" not in config:
        raise SystemExit(f"a launch without its four configuration arguments: {match.group(0)!r}")
    return f"::izwi_emu::launch({match.group(1)}, {config}, "


def shared_declarations(source, file_id):
    counter = 0

    def replace(match):
        nonlocal counter
        parts = [p.strip() for p in match.group(1).split(",")]
        first = DECLARATOR.match(parts[0])
        if not first:
            raise SystemExit(f"cannot read the __shared__ declaration {match.group(0)!r}")
        base_type = first.group(1).strip()
        out = []
        for i, part in enumerate(parts):
            declarator = DECLARATOR.match(part if i == 0 else f"{base_type} {part}")
            element_type, name, dims = declarator.group(1).strip(), declarator.group(2), declarator.group(3).strip()
            counter += 1
            out.append(f"auto& {name} = ::izwi_emu::shared_var<{element_type} {dims}, {file_id + counter}>();")
        return " ".join(out)

    return SHARED.sub(replace, source)


def main():
    source_path, output_path = sys.argv[1], sys.argv[2]
    with open(source_path, encoding="utf-8") as f:
        source = f.read()
    file_id = zlib.crc32(source_path.rsplit("/", 1)[-1].encode()) % 100000 * 1000
    source = LAUNCH.sub(launch, source)
    source = DYNAMIC_SHARED.sub(
        lambda m: f"{m.group(1)}* const {m.group(2)} = static_cast<{m.group(1)}*>(::izwi_emu::dynamic_shared());",
        source,
    )
    source = shared_declarations(source, file_id)
    if "<<<" in source or "__shared__" in source:
        raise SystemExit(f"{source_path}: a launch or __shared__ declaration the emulator cannot rewrite")
    header = '#include "cuda_emu.h"\n' if source_path.endswith(".cu") else ""
    with open(output_path, "w", encoding="utf-8") as f:
        f.write(f'// Generated from {source_path} by tests/cuda_emu/emulate_cuda_source.py.\n{header}#line 1 "{source_path}"\n{source}')


if __name__ == "__main__":
    main()
