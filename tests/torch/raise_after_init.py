"""A training script that fails after joining: nbox-cosim must end the run with a named error."""
import time

import torch.distributed as dist

dist.init_process_group("gloo")
print(f"EVENT_TIME {time.time():.6f}", flush=True)  # when it fails, for the test's clock
raise RuntimeError("the script failed on purpose")
