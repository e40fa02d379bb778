"""A training script whose process is killed after joining: nbox-cosim must end the run with a
named error, not wait for it."""
import os
import signal
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
dist.all_reduce(torch.ones(4))
print(f"EVENT_TIME {time.time():.6f}", flush=True)  # when it dies, for the test's clock
os.kill(os.getpid(), signal.SIGKILL)
