"""A training script that fails after joining: nbox-cosim must end the run with a named error."""
import torch.distributed as dist

dist.init_process_group("gloo")
raise RuntimeError("the script failed on purpose")
