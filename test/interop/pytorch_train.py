"""PyTorch interop for training: Recur's compiled training step against
PyTorch autograd and torch.optim.SGD.

1. Gradients: on seeded random LM shapes (odd sizes, embed != hidden, T = 1,
   B = 1, 1-4 layers, with and without clipping), one step of
   `recur-gen lstm-lm --train` run by recur-run from a torch LM's state_dict.
   The gradient each weight received, read off its change
   ((before - after) / lr, from --save-weights), must match autograd's (in
   float64, clipped by clip_grad_norm_) within 1e-4 of the weight's largest
   gradient, plus what an f32 weight cannot hold (one ulp of it over lr;
   a large lr keeps that small).
2. Training: 200 steps on a small synthetic corpus (a batch of sequences
   from a noisy deterministic grammar), Recur's losses (--outputs) against
   PyTorch's SGD loop in f32 from the same weights, with clipping. The loss
   must fall and follow PyTorch's curve within 1e-4 relative.

Exits 77 (ctest: skipped) when torch is not installed for this Python.
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_lm import SKIP, LanguageModel, load_safetensors, save_safetensors  # noqa: E402

import torch  # noqa: E402  (pytorch_lm exits 77 without it)


def recur_train(tool, tmp, shape, lr, clip, model, tokens, targets, steps,
                fusion="wavefront"):
    """Compiles the LM's training step, runs `steps` steps from `model`'s
    weights on (tokens, targets); returns (losses, trained weights)."""
    vocab, embed, hidden, layers = shape
    ir = os.path.join(tmp, "train.mlir")
    library = os.path.join(tmp, "libtrain.so")
    weights = os.path.join(tmp, "weights.safetensors")
    inputs = os.path.join(tmp, "batch.safetensors")
    losses = os.path.join(tmp, "losses.safetensors")
    trained = os.path.join(tmp, "trained.safetensors")
    subprocess.run([tool("recur-gen"), "lstm-lm", "--vocab", str(vocab),
                    "--embed", str(embed), "--hidden", str(hidden),
                    "--layers", str(layers), "--train", "--lr", repr(lr),
                    "--clip-norm", repr(clip), "-o", ir], check=True)
    subprocess.run([tool("recur-compile"), ir, "-o", library, "--quiet",
                    f"--fusion={fusion}"], check=True)
    save_safetensors(weights, model.state_dict())
    save_safetensors(inputs, {"tokens": tokens, "targets": targets})
    subprocess.run([tool("recur-run"), library, "--weights", weights,
                    "--inputs", inputs, "--steps", str(steps), "--outputs",
                    losses, "--save-weights", trained], check=True,
                   stdout=subprocess.DEVNULL)
    return load_safetensors(losses)["loss"], load_safetensors(trained)


def check_gradients(tool, shape, seq, batch, clip, fusion, lr, tolerance):
    """One step on one shape; returns (ok, worst error over largest gradient)."""
    vocab = shape[0]
    torch.manual_seed(hash((shape, seq, batch)) % 2**31)
    model = LanguageModel(*shape)
    tokens = torch.randint(0, vocab, (seq, batch), dtype=torch.int64)
    targets = torch.randint(0, vocab, (seq, batch), dtype=torch.int64)

    # The yardstick: autograd in float64 from the same f32 weights.
    reference = LanguageModel(*shape).double()
    reference.load_state_dict({k: v.double() for k, v in model.state_dict().items()})
    loss = torch.nn.functional.cross_entropy(
        reference(tokens).reshape(-1, vocab), targets.reshape(-1))
    loss.backward()
    if clip > 0:
        torch.nn.utils.clip_grad_norm_(reference.parameters(), clip)
    expected = {name: p.grad for name, p in reference.named_parameters()}

    with tempfile.TemporaryDirectory() as tmp:
        losses, trained = recur_train(tool, tmp, shape, lr, clip, model,
                                      tokens, targets, steps=1, fusion=fusion)
    ok = abs(losses[0].item() - loss.item()) <= tolerance * (1 + abs(loss.item()))
    worst = 0.0
    for name, before in model.state_dict().items():
        after = trained[name].double()
        got = (before.double() - after) / lr
        want = expected[name]
        largest = want.abs().max().item()
        allowed = tolerance * largest + after.abs() * 2.0**-23 / lr
        error = (got - want).abs()
        if not bool((error <= allowed).all()):
            print(f"FAIL: gradient of {name}: max abs error "
                  f"{error.max().item():.3g}, largest gradient {largest:.3g}")
            ok = False
        if largest > 0:
            worst = max(worst, error.max().item() / largest)
    print(f"gradients: fusion {fusion}, (vocab, embed, hidden, layers) = "
          f"{shape}, T = {seq}, B = {batch}, clip {clip}: loss "
          f"{losses[0].item():.6f} (autograd {loss.item():.6f}), worst "
          f"gradient error {worst:.3g} of the weight's largest: "
          f"{'pass' if ok else 'FAIL'}")
    return ok


def synthetic_corpus(vocab, seq, batch, generator):
    """Sequences where each token mostly follows from the one before
    (t -> 3t + 1 mod vocab), with 10% noise: learnable, not trivial."""
    tokens = torch.empty(seq + 1, batch, dtype=torch.int64)
    tokens[0] = torch.randint(0, vocab, (batch,), generator=generator)
    for t in range(seq):
        follow = (3 * tokens[t] + 1) % vocab
        noise = torch.randint(0, vocab, (batch,), generator=generator)
        keep = torch.rand(batch, generator=generator) >= 0.1
        tokens[t + 1] = torch.where(keep, follow, noise)
    return tokens[:-1].clone(), tokens[1:].clone()


def check_training_curve(tool, steps, tolerance):
    # A trajectory stable under rounding (PyTorch's own f32 and float64 runs
    # agree to 2e-7) with clipping at every step. With a larger lr the loss
    # drops suddenly at a step that rounding decides: PyTorch's f32 and
    # float64 curves then differ by up to 15%, and so would any two f32
    # implementations.
    shape, seq, batch, lr, clip = (23, 10, 16, 2), 12, 8, 0.5, 0.1
    generator = torch.Generator().manual_seed(7)
    tokens, targets = synthetic_corpus(shape[0], seq, batch, generator)
    torch.manual_seed(11)
    model = LanguageModel(*shape)
    start = {k: v.clone() for k, v in model.state_dict().items()}

    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    expected = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(
            model(tokens).reshape(-1, shape[0]), targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        expected.append(loss.item())
    expected = torch.tensor(expected)

    model.load_state_dict(start)
    with tempfile.TemporaryDirectory() as tmp:
        losses, _ = recur_train(tool, tmp, shape, lr, clip, model, tokens,
                                targets, steps)
    error = ((losses.double() - expected.double()).abs()
             / expected.double().abs()).max().item()
    falls = losses[-1].item() < 0.7 * losses[0].item()
    ok = losses.shape == (steps,) and error <= tolerance and falls
    marks = [0, steps // 4, steps // 2, 3 * steps // 4, steps - 1]
    print("training curve: (vocab, embed, hidden, layers) = "
          f"{shape}, T = {seq}, B = {batch}, SGD lr {lr}, clip {clip}, "
          f"{steps} steps on one synthetic batch")
    for step in marks:
        print(f"  step {step + 1:4d}: Recur {losses[step].item():.6f}, "
              f"PyTorch {expected[step].item():.6f}")
    print(f"training curve: max relative difference {error:.3g} (tolerance "
          f"{tolerance}), loss falls {losses[0].item():.3f} -> "
          f"{losses[-1].item():.3f}: {'pass' if ok else 'FAIL'}")
    return ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="directory of recur tools")
    parser.add_argument("--random-shapes", type=int, default=6)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--tolerance", type=float, default=1e-4,
                        help="gradients, relative to the weight's largest")
    parser.add_argument("--curve-tolerance", type=float, default=1e-4,
                        help="losses along the curve, relative")
    args = parser.parse_args()
    torch.set_num_threads(1)
    tool = lambda name: os.path.join(args.bin, name)

    rng = random.Random(2026)
    ok = True
    for index in range(args.random_shapes):
        layers = index % 4 + 1
        embed, hidden = rng.randint(1, 12), 2 * rng.randint(1, 8) + 1
        if embed == hidden:
            embed += 1
        seq, batch = rng.randint(2, 7), rng.randint(2, 5)
        if index == 0:
            seq = 1
        elif index == 1:
            batch = 1
        clip = [0.0, 0.05, 1.0][index % 3]
        fusion = ["wavefront", "none", "hoist"][index % 3]
        shape = (rng.randint(2, 40), embed, hidden, layers)
        # A large lr makes each step large against the weight's f32 ulp, so
        # that the change read back resolves the gradient to ~1e-7.
        ok &= check_gradients(tool, shape, seq, batch, clip, fusion, lr=1000.0,
                              tolerance=args.tolerance)
    ok &= check_training_curve(tool, args.steps, args.curve_tolerance)
    if not ok:
        sys.exit(1)
    print("pass")


if __name__ == "__main__":
    main()
