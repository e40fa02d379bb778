"""Runs bridge/torch/examples/train_megatron_style.py with one mistake in its communication, for
test_megatron_style.py's checks that nbox-cosim names a real rank's disagreement with the
scenario:

    megatron_style_fault.py skip-grad-norm|grad-norm-on-data-group SCRIPT [ARGS...]

skip-grad-norm leaves out the gradient norm's all-reduce (one fp32, the model-parallel group);
grad-norm-on-data-group runs it on the data-parallel group instead.
"""

import runpy
import sys

import torch.distributed as dist

FAULT = sys.argv[1]
if FAULT not in ("skip-grad-norm", "grad-norm-on-data-group"):
    sys.exit(f"megatron_style_fault.py: unknown fault {FAULT}")
original_all_reduce = dist.all_reduce


def all_reduce(tensor, op=dist.ReduceOp.SUM, group=None, async_op=False):
    # The gradient norm is the script's only sum of a single float.
    if tensor.numel() == 1 and op == dist.ReduceOp.SUM:
        if FAULT == "skip-grad-norm":
            return None
        group = sys.modules["__main__"].DATA_GROUP
    return original_all_reduce(tensor, op=op, group=group, async_op=async_op)


dist.all_reduce = all_reduce
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
