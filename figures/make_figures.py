"""Regenerate the figures of the README and the lessons: `make figures`.

- neuron.svg / neuron.png: the graph of one neuron, y = tanh(w·x + b), after backward,
  with data and gradients.
- backward_steps.svg / backward_steps.png: the same graph, one frame per engine step, in
  rows of three and without the data rows (the neuron figure has them), so that it reads
  at a README's width (about 800 pixels).

Every figure is drawn by minigrad.viz from a fixed program, so running this twice writes
the same files.
"""

from __future__ import annotations

from pathlib import Path

import minigrad
from minigrad import viz

HERE = Path(__file__).resolve().parent


def neuron() -> tuple[minigrad.Variable, ...]:
    """One neuron with three inputs: y = tanh(z), z = w·x + b. Returns (x, w, b, z, y)."""
    x = minigrad.Variable([1.0, -2.0, 0.5], name="x")
    w = minigrad.Variable([0.8, 0.3, -0.6], requires_grad=True, name="w")
    b = minigrad.Variable(0.2, requires_grad=True, name="b")
    z = (w * x).sum() + b
    z.name = "z"
    z.retain_grad()  # so the drawing can show z's gradient too
    y = minigrad.tanh(z)
    y.name = "y"
    return x, w, b, z, y


def drawings() -> dict[str, viz.Drawing]:
    """The figures by file name: the neuron after backward, and its backward step by step."""
    # The leaves stay referenced here: a leaf nobody holds is drawn as freed.
    x, w, b, z, y = neuron()
    frames = viz.backward_steps(y, retain_graph=True, show_data=False)
    # After backward_steps the leaves hold their gradients, so the drawing shows them.
    return {
        "neuron": viz.draw(y),
        "backward_steps": viz.strip(frames, title="backward, one engine step at a time", columns=3),
    }


def main(directory: Path = HERE) -> list[Path]:
    """Draw the figures into `directory`; return the paths written."""
    Path(directory).mkdir(parents=True, exist_ok=True)
    written = []
    for name, figure in drawings().items():
        for suffix in ("svg", "png"):
            written.append(figure.save(Path(directory) / f"{name}.{suffix}"))
            print(f"wrote {written[-1]}")
    return written


if __name__ == "__main__":
    main()
