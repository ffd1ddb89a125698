"""Huge pages for a loaded model's weights (Linux only; anywhere else, or on any failure, nothing).

A short question's model run reads every weight of the model once (~21 MB of int8 matrices for e5
or bge, prepacked by onnxruntime into its own heap blocks at session load), far more than a core's
L2: the run waits on those loads (perf: the AMX tile loads of the int8 products are the hottest
spot). On 4 kB pages that is ~5,000 pages a run; the kernel backs anonymous memory with 2 MB pages
only where asked (`transparent_hugepage` is usually `madvise`). So after a session is built, the
anonymous writable regions that appeared while it was built are advised MADV_HUGEPAGE and collapsed
(MADV_COLLAPSE, Linux 6.1+; else khugepaged does it later). The numbers are the same bytes on other
pages: vectors are bit-identical (tests/test_embed_pages.py).

Only regions new since `before` and at least 2 MB are touched, so Python's heap and the pages of
other models are left as they are; a region's RSS can grow by less than 2 MB at each end.
"""

from __future__ import annotations

HUGE = 2 << 20
MADV_HUGEPAGE = 14
MADV_COLLAPSE = 25


def regions() -> set[tuple[int, int]]:
    """(start, end) of this process's anonymous writable mappings (empty where there is no /proc)."""
    out: set[tuple[int, int]] = set()
    try:
        with open("/proc/self/maps") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) == 5 and parts[1].startswith("rw"):  # no path: anonymous
                    lo, hi = parts[0].split("-")
                    out.add((int(lo, 16), int(hi, 16)))
    except OSError:
        pass
    return out


def advise_new(before: set[tuple[int, int]]) -> int:
    """Advise huge pages for the anonymous regions not in `before` (2 MB-aligned parts of at least
    2 MB). Returns the bytes advised; never raises."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        madvise = libc.madvise
        madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        madvise.restype = ctypes.c_int
    except (OSError, AttributeError):
        return 0
    done = 0
    for lo, hi in sorted(regions() - before):
        start, end = (lo + HUGE - 1) & ~(HUGE - 1), hi & ~(HUGE - 1)
        if end - start < HUGE:
            continue
        if madvise(start, end - start, MADV_HUGEPAGE) == 0:
            madvise(start, end - start, MADV_COLLAPSE)  # may fail (older kernel): khugepaged then
            done += end - start
    return done
