"""A training script that joins, all-reduces once, then computes for a minute without calling
torch.distributed: a killed nbox-cosim must still end it (the backend's watchdog)."""
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
dist.all_reduce(torch.ones(4))
print("computing", flush=True)
time.sleep(60)
sys.exit("the watchdog did not end this rank")
