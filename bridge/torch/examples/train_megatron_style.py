"""A Megatron-style training script in plain PyTorch (nothing in it knows about nbox): a small
Llama-shaped transformer (RMSNorm, SwiGLU MLP, no biases, untied output layer) trained with
tensor, pipeline and data parallelism over torch.distributed, the usual torchrun way (RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT in the environment), gloo backend, fp32 on the CPU.

    torchrun --nproc_per_node 8 train_megatron_style.py              # alone, every rank real
    python3 -m nbox_torch.run train_megatron_style.py                # a real rank under nbox

It does what Megatron-LM does, rank for rank (scenarios/megatron-style.ini is the same job
as an nbox transformer workload, so the ranks nbox emulates and this script's real ranks
exchange the same messages):

- Ranks: rank = tp + t (dp + d pp) (Megatron's order tp-dp-pp); groups made with new_group,
  every rank creating every group in the same order: tensor (t consecutive ranks), data (same
  tp index and stage), pipeline (same tp index and replica, by stage), model-parallel (the
  t x p ranks of a replica: the gradient norm).
- Tensor parallelism (Shoeybi et al. 2019): a vocabulary-parallel embedding (all-reduce
  forward), per layer a column-parallel QKV and a row-parallel output projection, a
  column-parallel gate and up and a row-parallel down projection (the f operator all-reduces
  in the backward, g in the forward), a column-parallel output layer, and the
  vocabulary-parallel cross entropy (three all-reduces of one fp32 per token: max, target
  logit, sum of exponentials).
- Pipeline parallelism: Megatron's 1F1B without interleaving
  (forward_backward_pipelining_without_interleaving), its send_forward_recv_backward and
  send_backward_recv_forward each one batch of isend/irecv on the pipeline group.
- Data parallelism: after the last micro-batch's backward, every gradient in one flat buffer
  all-reduced over the data-parallel group and averaged; then the gradient norm's all-reduce
  of one fp32 over the model-parallel group, clipping, and an SGD step.

Prints, on the last stage's first tensor rank, "iteration K loss L"; with --digest, every
rank prints "digest I M NAME SHA256" for each forward tensor-parallel all-reduce result
(iteration I, micro-batch M), so two runs can be compared bit for bit.
"""

import argparse
import hashlib

import torch
import torch.distributed as dist
import torch.nn.functional as F


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tensor", type=int, default=2)
    parser.add_argument("--pipeline", type=int, default=2)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--ffn", type=int, default=256)
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--micro-batch", type=int, default=2)
    parser.add_argument("--global-batch", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--digest", action="store_true")
    return parser.parse_args()


ARGS = parse()
dist.init_process_group("gloo")
RANK, WORLD = dist.get_rank(), dist.get_world_size()
T, P = ARGS.tensor, ARGS.pipeline
D = WORLD // (T * P)
if T * P * D != WORLD or ARGS.global_batch % (ARGS.micro_batch * D):
    raise SystemExit(f"world {WORLD} is not t {T} x p {P} x d, or the global batch "
                     f"{ARGS.global_batch} is not a multiple of micro-batch x d")
TP, DP, PP = RANK % T, RANK // T % D, RANK // (T * D)
MICROBATCHES = ARGS.global_batch // (ARGS.micro_batch * D)


def rank_of(tp, dp, pp):
    return tp + T * (dp + D * pp)


# Every rank makes every group, in the same order, as torch.distributed requires.
def make_groups(members_of):
    mine = None
    for members in members_of:
        group = dist.new_group(members)
        if RANK in members:
            mine = group
    return mine


TENSOR_GROUP = make_groups([[rank_of(t, d, p) for t in range(T)]
                            for p in range(P) for d in range(D)])
DATA_GROUP = make_groups([[rank_of(t, d, p) for d in range(D)]
                          for p in range(P) for t in range(T)])
PIPELINE_RANKS = [rank_of(TP, DP, p) for p in range(P)]
PIPELINE_GROUP = make_groups([[rank_of(t, d, p) for p in range(P)]
                              for d in range(D) for t in range(T)])
MODEL_GROUP = make_groups([[rank_of(t, d, p) for p in range(P) for t in range(T)]
                           for d in range(D)])

digests = []
position = {"iteration": 0, "microbatch": 0}


def record(name, tensor):
    if ARGS.digest:
        sha = hashlib.sha256(tensor.detach().contiguous().numpy().tobytes()).hexdigest()
        digests.append(f"digest {position['iteration']} {position['microbatch']} {name} {sha}")


class CopyToTensorRegion(torch.autograd.Function):
    """Megatron's f: identity forward, all-reduce of the input gradient backward."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous()
        dist.all_reduce(grad, group=TENSOR_GROUP)
        return grad


class ReduceFromTensorRegion(torch.autograd.Function):
    """Megatron's g: all-reduce forward, identity backward."""

    @staticmethod
    def forward(ctx, x, name):
        x = x.contiguous()
        dist.all_reduce(x, group=TENSOR_GROUP)
        record(name, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class VocabParallelCrossEntropy(torch.autograd.Function):
    """Megatron's vocab_parallel_cross_entropy: each rank holds V / t logits of every token."""

    @staticmethod
    def forward(ctx, logits, targets, vocab_start):
        local_max = logits.max(dim=-1)[0]
        dist.all_reduce(local_max, op=dist.ReduceOp.MAX, group=TENSOR_GROUP)
        logits = logits - local_max.unsqueeze(-1)
        local = targets - vocab_start
        outside = (local < 0) | (local >= logits.shape[-1])
        local = local.masked_fill(outside, 0)
        target_logit = logits.gather(-1, local.unsqueeze(-1)).squeeze(-1)
        target_logit = target_logit.masked_fill(outside, 0.0)
        dist.all_reduce(target_logit, group=TENSOR_GROUP)
        exp = logits.exp()
        sum_exp = exp.sum(dim=-1)
        dist.all_reduce(sum_exp, group=TENSOR_GROUP)
        softmax = exp / sum_exp.unsqueeze(-1)
        ctx.save_for_backward(softmax, local, outside)
        return sum_exp.log() - target_logit

    @staticmethod
    def backward(ctx, grad):
        softmax, local, outside = ctx.saved_tensors
        grad_logits = softmax.clone()
        inside = (~outside).to(softmax.dtype)
        grad_logits.scatter_add_(-1, local.unsqueeze(-1), -inside.unsqueeze(-1))
        return grad_logits * grad.unsqueeze(-1), None, None


def rms_norm(x, weight):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * weight


class Layer(torch.nn.Module):
    def __init__(self, index):
        super().__init__()
        h, local_heads = ARGS.hidden, ARGS.heads // T
        self.index = index
        self.head_dim = h // ARGS.heads
        self.local_heads = local_heads
        self.norm1 = torch.nn.Parameter(torch.ones(h))
        self.norm2 = torch.nn.Parameter(torch.ones(h))
        scale = h ** -0.5
        self.qkv = torch.nn.Parameter(torch.randn(h, 3 * local_heads * self.head_dim) * scale)
        self.proj = torch.nn.Parameter(torch.randn(local_heads * self.head_dim, h) * scale)
        self.gate = torch.nn.Parameter(torch.randn(h, ARGS.ffn // T) * scale)
        self.up = torch.nn.Parameter(torch.randn(h, ARGS.ffn // T) * scale)
        self.down = torch.nn.Parameter(torch.randn(ARGS.ffn // T, h) * ARGS.ffn ** -0.5)

    def forward(self, x):
        b, s, _ = x.shape
        y = CopyToTensorRegion.apply(rms_norm(x, self.norm1))
        q, k, v = (y @ self.qkv).view(b, s, 3, self.local_heads, self.head_dim).unbind(2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-1, -2)) * self.head_dim ** -0.5
        causal = torch.ones(s, s, dtype=torch.bool).triu(1)
        attention = scores.masked_fill(causal, float("-inf")).softmax(-1) @ v
        attention = attention.transpose(1, 2).reshape(b, s, -1) @ self.proj
        x = x + ReduceFromTensorRegion.apply(attention, f"L{self.index} attn")
        y = CopyToTensorRegion.apply(rms_norm(x, self.norm2))
        mlp = (F.silu(y @ self.gate) * (y @ self.up)) @ self.down
        return x + ReduceFromTensorRegion.apply(mlp, f"L{self.index} mlp")


class Stage(torch.nn.Module):
    """The layers of one pipeline stage, with the embedding on the first and the final norm,
    output layer and loss on the last."""

    def __init__(self):
        super().__init__()
        per_stage = ARGS.layers // P
        self.first, self.last = PP == 0, PP == P - 1
        self.vocab_start = TP * (ARGS.vocab // T)
        self.layers = torch.nn.ModuleList(Layer(PP * per_stage + i) for i in range(per_stage))
        if self.first:
            self.embedding = torch.nn.Parameter(torch.randn(ARGS.vocab // T, ARGS.hidden))
        if self.last:
            self.final_norm = torch.nn.Parameter(torch.ones(ARGS.hidden))
            self.output = torch.nn.Parameter(
                torch.randn(ARGS.hidden, ARGS.vocab // T) * ARGS.hidden ** -0.5)

    def forward(self, x, tokens, targets):
        if self.first:
            local = tokens - self.vocab_start
            outside = (local < 0) | (local >= self.embedding.shape[0])
            x = F.embedding(local.masked_fill(outside, 0), self.embedding)
            x = ReduceFromTensorRegion.apply(x.masked_fill(outside.unsqueeze(-1), 0.0),
                                             "embedding")
        for layer in self.layers:
            x = layer(x)
        if not self.last:
            return x
        y = CopyToTensorRegion.apply(rms_norm(x, self.final_norm))
        losses = VocabParallelCrossEntropy.apply(y @ self.output, targets, self.vocab_start)
        return losses.mean() / MICROBATCHES


def p2p(send=None, send_to=None, recv_from=None):
    """One batch of isend/irecv on the pipeline group (Megatron's _communicate)."""
    shape = (ARGS.micro_batch, ARGS.seq, ARGS.hidden)
    received = torch.empty(shape) if recv_from is not None else None
    works = []
    if send is not None:
        works.append(dist.isend(send.detach().contiguous(), PIPELINE_RANKS[send_to],
                                group=PIPELINE_GROUP))
    if received is not None:
        works.append(dist.irecv(received, PIPELINE_RANKS[recv_from], group=PIPELINE_GROUP))
    for work in works:
        work.wait()
    return received


def batch(iteration, microbatch):
    """The replica's micro-batch: the same on every tensor rank and stage of it."""
    generator = torch.Generator().manual_seed(
        ((ARGS.seed * 1000 + iteration) * D + DP) * MICROBATCHES + microbatch)
    tokens = torch.randint(0, ARGS.vocab, (ARGS.micro_batch, ARGS.seq + 1), generator=generator)
    return tokens[:, :-1], tokens[:, 1:]


def train():
    torch.manual_seed(ARGS.seed * 1000 + RANK)
    stage = Stage()
    parameters = list(stage.parameters())
    optimizer = torch.optim.SGD(parameters, lr=ARGS.lr)
    first, last = stage.first, stage.last
    previous, following = PP - 1, PP + 1
    for iteration in range(ARGS.iterations):
        position["iteration"] = iteration
        optimizer.zero_grad()
        inputs, outputs, losses = {}, {}, []

        def forward(microbatch, received):
            position["microbatch"] = microbatch
            if received is not None:
                received.requires_grad_()
            inputs[microbatch] = received
            tokens, targets = batch(iteration, microbatch)
            outputs[microbatch] = stage(received, tokens, targets)
            if last:
                losses.append(outputs[microbatch].detach())
            return None if last else outputs[microbatch]

        def backward(microbatch, grad):
            output = outputs.pop(microbatch)
            torch.autograd.backward(output, grad_tensors=None if last else grad)
            received = inputs.pop(microbatch)
            return None if first else received.grad

        warmup = min(P - PP - 1, MICROBATCHES)
        remaining = MICROBATCHES - warmup
        forward_index, backward_index = 0, 0
        for _ in range(warmup):
            received = None if first else p2p(recv_from=previous)
            sent = forward(forward_index, received)
            forward_index += 1
            p2p(send=sent, send_to=following)
        received = None if first or remaining == 0 else p2p(recv_from=previous)
        for i in range(remaining):
            sent = forward(forward_index, received)
            forward_index += 1
            grad = None if last else p2p(send=sent, send_to=following, recv_from=following)
            grad_in = backward(backward_index, grad)
            backward_index += 1
            if i == remaining - 1:
                received = None
                if not first:
                    p2p(send=grad_in, send_to=previous)
            else:
                received = None if first else p2p(send=grad_in, send_to=previous,
                                                  recv_from=previous)
        for _ in range(warmup):
            grad = p2p(recv_from=following)
            grad_in = backward(backward_index, grad)
            backward_index += 1
            if not first:
                p2p(send=grad_in, send_to=previous)

        # Data parallelism: one flat buffer of every gradient, all-reduced and averaged.
        flat = torch.cat([p.grad.reshape(-1) for p in parameters])
        dist.all_reduce(flat, group=DATA_GROUP)
        flat /= D
        offset = 0
        for p in parameters:
            p.grad.copy_(flat[offset:offset + p.numel()].view_as(p))
            offset += p.numel()
        # The gradient norm over the model-parallel ranks, then clipping to 1.
        squares = torch.stack([p.grad.pow(2).sum() for p in parameters]).sum().reshape(1)
        dist.all_reduce(squares, group=MODEL_GROUP)
        scale = min(1.0, 1.0 / (float(squares.sqrt()) + 1e-6))
        for p in parameters:
            p.grad.mul_(scale)
        optimizer.step()
        if last and TP == 0:
            print(f"iteration {iteration} loss {float(sum(losses)):.6f}", flush=True)
    for line in digests:
        print(line, flush=True)


train()
dist.destroy_process_group()
