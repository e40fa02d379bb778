"""An ordinary PyTorch DDP training script (nothing in it knows about nbox): a small CNN on
synthetic 16x16 images, data-parallel over torch.distributed with the gloo backend, run the
usual torchrun way (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT in the environment).

    torchrun --nproc_per_node 2 train_ddp.py --epochs 1        # alone
    python3 -m nbox_torch.run train_ddp.py --epochs 1          # as a real rank under nbox

Prints one line per step: "step N loss L".
"""

import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--steps-per-epoch", type=int, default=8)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--same-data", action="store_true",
                        help="every rank trains on the same data (a homogeneous job)")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(args.seed)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(16 * 4 * 4, 10))
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    # Synthetic data: each rank its own shard, the same on every run with the same seed.
    generator = torch.Generator().manual_seed(args.seed * 1000 + (0 if args.same_data else rank))
    step = 0
    for _ in range(args.epochs):
        for _ in range(args.steps_per_epoch):
            images = torch.randn(args.batch, 1, 16, 16, generator=generator)
            labels = torch.randint(0, 10, (args.batch,), generator=generator)
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(ddp(images), labels)
            loss.backward()
            optimizer.step()
            print(f"step {step} loss {loss.item():.6f}", flush=True)
            step += 1
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
