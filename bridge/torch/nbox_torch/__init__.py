"""torch.distributed over nbox: importing this package registers the "nbox" c10d backend.

    import nbox_torch  # noqa: F401
    torch.distributed.init_process_group("nbox", ...)

Each collective and point-to-point call on CPU tensors runs on nbox's host runtime
(libnbox_host.so), so its bytes cross the network of the ncclNet plugin the runtime loads
(NBOX_NET_PLUGIN: libnccl-net-nbox.so under nbox-cosim, libnccl-net-nboxtcp.so for plain TCP).
README.md, "PyTorch ranks", lists what is supported.
"""

import torch.distributed as dist

from . import _nbox_c10d

dist.Backend.register_backend("nbox", _nbox_c10d.create)
