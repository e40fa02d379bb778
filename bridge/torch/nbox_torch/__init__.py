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



def _create(options, pg_options):
    """torch's extended backend API: it passes a new_group's job ranks (empty for the default
    group), which a real rank of nbox-cosim needs to join the scenario's group of those
    ranks."""
    del pg_options  # the nbox backend has no options
    return _nbox_c10d.create(options.store, options.group_rank, options.group_size,
                             options.timeout, list(options.global_ranks_in_group))


dist.Backend.register_backend("nbox", _create, extended_api=True)
