"""The peak-memory probe the memory tests' child processes run (pasted into their source)."""

PEAK_SOURCE = """
import resource, sys

def peak():
    # Linux: VmHWM, the peak of this process image. ru_maxrss would start at the parent's peak
    # (it carries over a vfork + exec), which hides part of what this process adds below that.
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024  # Linux reports KiB
"""
