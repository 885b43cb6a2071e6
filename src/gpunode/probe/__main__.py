"""``python -m gpunode.probe``: run the probe and print its JSON (no CLI deps needed).

The user-facing command is ``gpunode probe``; this entry point exists so the probe
runs on a bare GPU machine with only msgspec, PyYAML and the NVML bindings.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpunode.errors import GpunodeError
from gpunode.probe import probe_json, run_probe, write_probe_bundle


def main(argv: list[str] | None = None) -> int:
    """Probe, print JSON, optionally write a bundle; exit 1 when NVML did not start."""
    parser = argparse.ArgumentParser(prog="python -m gpunode.probe")
    parser.add_argument("--host-root", default="/")
    parser.add_argument("--node-name")
    parser.add_argument("--bundle", type=Path, help="also write the bundle layout here")
    parser.add_argument("--nvidia-smi", action="store_true", help="also run nvidia-smi -q -x")
    args = parser.parse_args(argv)
    result = run_probe(args.host_root, args.node_name, run_nvidia_smi=args.nvidia_smi)
    try:
        if args.bundle is not None:
            write_probe_bundle(result, args.bundle)
    except GpunodeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    sys.stdout.buffer.write(probe_json(result))
    return 0 if result.nvml.init_ok else 1


if __name__ == "__main__":
    sys.exit(main())
