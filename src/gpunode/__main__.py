"""``python -m gpunode``: the same as the ``gpunode`` console script."""

from gpunode.cli import run

if __name__ == "__main__":
    run()
