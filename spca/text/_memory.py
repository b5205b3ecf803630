"""Large scratch arrays of the corpus passes, aligned for transparent huge pages.

numpy asks the kernel for transparent huge pages (``madvise``) on buffers of
4 MiB or more, but the kernel can back only the whole, aligned 2 MiB extents
of a buffer with them: in an unaligned buffer's first and last extents each
4 KiB page is a page fault of its own.  :func:`huge_empty` cuts its array
from a numpy buffer 2 MiB longer, at a 2 MiB boundary (the unused end is
never touched, so never faulted in).  ``sparse_topics`` on the NYT sample
(the default 1,024 candidates, one thread, repeated calls): page faults per
call about 1,050 -> 17-66, with the document ids, pass 2's record scratch
and its Gram matrix in such arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import DTypeLike

#: The size of a transparent huge page on x86-64 (and of arm64's usual one).
HUGE_PAGE = 1 << 21


def huge_empty(shape: int | tuple[int, ...], dtype: DTypeLike = np.float64) -> Any:
    """``np.empty(shape, dtype)``, C-ordered, whose data starts at a multiple
    of HUGE_PAGE when it is at least HUGE_PAGE bytes long (smaller arrays
    are plain ``np.empty``)."""
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if n < HUGE_PAGE:
        return np.empty(shape, dtype=dtype)
    raw = np.empty(n + HUGE_PAGE, dtype=np.uint8)
    start = -raw.ctypes.data % HUGE_PAGE
    return raw[start:start + n].view(dtype).reshape(shape)
