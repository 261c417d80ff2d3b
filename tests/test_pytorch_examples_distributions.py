"""PyTorch's REINFORCE and VAE examples, run on minigrad.distributions with only the
imports changed.

Sources: the pytorch/examples repository (commit 77f55b9, August 2025), files
reinforcement_learning/reinforce.py and vae/main.py. Their code is copied below as
published, inside functions that take the library (`torch`: minigrad, or real PyTorch
through the `real_torch` fixture) so that the same lines run on both.

What changed, and why:
- Imports: `import torch`, `torch.nn as nn`, `torch.nn.functional as F`, `torch.optim as
  optim` and `from torch.distributions import Categorical` become the library passed in
  (and `_from(torch, "distributions", "Categorical")`).
- reinforce.py: argparse's `args` is an argparse.Namespace with the file's defaults (no
  command line in a test). gym's CartPole-v1 is replaced by `TinyCartPole` below: the
  same cart-and-pole equations of motion, state, actions, reward of 1 per step and
  termination rule, seeded and deterministic, episodes truncated at 60 steps (CartPole-v1:
  500) to keep the test fast, and no rendering. `main()`'s `for i_episode in count(1)`,
  which runs until the task is solved, runs a given number of episodes instead. The
  Policy, select_action and finish_episode are as written.
- vae/main.py: the VAE class, reparameterize and loss_function are as written; MNIST is
  replaced by a made-up batch of 8 "images" in [0, 1] (784 values each), and the train
  loop's body runs a few steps on it (no DataLoader, logging or save_image).

What runs:
- REINFORCE on minigrad: a few episodes of main(); every parameter changes, gradients
  are finite, the loss finish_episode backpropagates is finite and equals its formula
  (computed here in NumPy from the saved log-probabilities and rewards), and a seeded run
  repeats exactly. With real PyTorch: one episode replayed with the same weights, states
  and actions (dropout off, so both libraries compute the same thing) gives the same
  log-probabilities and, after finish_episode's Adam step, the same parameters.
- VAE: the loss is finite and falls over a few Adam steps; KLD equals
  kl_divergence(Normal(mu, std), Normal(0, 1)).sum() and has the same gradients;
  reparameterize equals Normal(mu, std).rsample() under the same seed; with real
  PyTorch, loss_function's value and gradients equal PyTorch's in float64.
"""

# The examples' code is kept as published (class Policy(nn.Module) with super(Policy,
# self), a loop variable `t` it never reads, the name R reused).
# ruff: noqa: UP008, B007, N806

from __future__ import annotations

import argparse
import math
from collections import deque
from types import SimpleNamespace

import numpy as np
import pytest
from pytorch_example_harness import from_library as _from

import minigrad
import minigrad.distributions as D

# --------------------------------------------------------------------------- environment


class TinyCartPole:
    """CartPole's physics without gym: a pole hinged on a cart that is pushed left
    (action 0) or right (action 1) with a force of 10 N, simulated with Euler steps of
    0.02 s. Reward 1 per step; the episode ends when the pole leans more than 12 degrees
    or the cart leaves [-2.4, 2.4] (terminated), or after `max_steps` (truncated)."""

    spec = SimpleNamespace(reward_threshold=475.0)  # CartPole-v1's

    def __init__(self, max_steps: int = 60) -> None:
        self.max_steps = max_steps
        self._rng = np.random.default_rng(0)
        self.state = np.zeros(4)
        self.steps = 0

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.state = self._rng.uniform(-0.05, 0.05, size=4)
        self.steps = 0
        return self.state.astype(np.float32), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        gravity, cart_mass, pole_mass, half_length, tau = 9.8, 1.0, 0.1, 0.5, 0.02
        total_mass = cart_mass + pole_mass
        x, x_dot, theta, theta_dot = self.state
        force = 10.0 if action == 1 else -10.0
        cos, sin = math.cos(theta), math.sin(theta)
        push = (force + pole_mass * half_length * theta_dot**2 * sin) / total_mass
        theta_acc = (gravity * sin - cos * push) / (
            half_length * (4.0 / 3.0 - pole_mass * cos**2 / total_mass)
        )
        x_acc = push - pole_mass * half_length * theta_acc * cos / total_mass
        self.state = np.array(
            [
                x + tau * x_dot,
                x_dot + tau * x_acc,
                theta + tau * theta_dot,
                theta_dot + tau * theta_acc,
            ]
        )
        self.steps += 1
        terminated = abs(self.state[0]) > 2.4 or abs(self.state[2]) > 12 * 2 * math.pi / 360
        truncated = self.steps >= self.max_steps
        return self.state.astype(np.float32), 1.0, bool(terminated), truncated, {}

    def render(self) -> None:
        pass


# --------------------------------------------------------------------------- REINFORCE


def reinforce_program(torch, env, Categorical=None):
    """reinforcement_learning/reinforce.py with `torch` the library given and `env` the
    environment; returns its objects and functions."""
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim
    if Categorical is None:
        Categorical = _from(torch, "distributions", "Categorical")
    args = argparse.Namespace(gamma=0.99, seed=543, render=False, log_interval=10)

    # ---- from here on as the file has it (module level), except where marked
    env.reset(seed=args.seed)
    torch.manual_seed(args.seed)

    class Policy(nn.Module):
        def __init__(self):
            super(Policy, self).__init__()
            self.affine1 = nn.Linear(4, 128)
            self.dropout = nn.Dropout(p=0.6)
            self.affine2 = nn.Linear(128, 2)

            self.saved_log_probs = []
            self.rewards = []

        def forward(self, x):
            x = self.affine1(x)
            x = self.dropout(x)
            x = F.relu(x)
            action_scores = self.affine2(x)
            return F.softmax(action_scores, dim=1)

    policy = Policy()
    optimizer = optim.Adam(policy.parameters(), lr=1e-2)
    eps = np.finfo(np.float32).eps.item()

    def select_action(state):
        state = torch.from_numpy(state).float().unsqueeze(0)
        probs = policy(state)
        m = Categorical(probs)
        action = m.sample()
        policy.saved_log_probs.append(m.log_prob(action))
        return action.item()

    def finish_episode():
        R = 0
        policy_loss = []
        returns = deque()
        for r in policy.rewards[::-1]:
            R = r + args.gamma * R
            returns.appendleft(R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        for log_prob, R in zip(policy.saved_log_probs, returns):
            policy_loss.append(-log_prob * R)
        optimizer.zero_grad()
        policy_loss = torch.cat(policy_loss).sum()
        policy_loss.backward()
        optimizer.step()
        del policy.rewards[:]
        del policy.saved_log_probs[:]

    def main(episodes):  # changed: main() with `for i_episode in count(1)` runs until solved
        running_reward = 10
        for i_episode in range(1, episodes + 1):
            state, _ = env.reset()
            ep_reward = 0
            for t in range(1, 10000):  # Don't infinite loop while learning
                action = select_action(state)
                state, reward, terminated, truncated, _ = env.step(action)
                if args.render:
                    env.render()
                policy.rewards.append(reward)
                ep_reward += reward
                if terminated or truncated:
                    break

            running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
            finish_episode()
            if i_episode % args.log_interval == 0:
                print(
                    f"Episode {i_episode}\tLast reward: {ep_reward:.2f}\t"
                    f"Average reward: {running_reward:.2f}"
                )
            if running_reward > env.spec.reward_threshold:
                print(
                    f"Solved! Running reward is now {running_reward} and "
                    f"the last episode runs to {t} time steps!"
                )
                break
        return running_reward  # changed: returned, for the test

    return SimpleNamespace(
        policy=policy,
        optimizer=optimizer,
        select_action=select_action,
        finish_episode=finish_episode,
        main=main,
        args=args,
        eps=eps,
    )


def _parameters(policy) -> list[np.ndarray]:
    return [np.array(p.detach().numpy(), dtype=np.float64) for p in policy.parameters()]


def _play_episode(program, env) -> None:
    """One episode, with main()'s own loop lines, stopping before finish_episode."""
    state, _ = env.reset()
    for _ in range(1, 10000):
        action = program.select_action(state)
        state, reward, terminated, truncated, _ = env.step(action)
        program.policy.rewards.append(reward)
        if terminated or truncated:
            break


def _expected_loss(log_probs: list[float], rewards: list[float], gamma: float, eps: float):
    """finish_episode's loss in NumPy: -Σ_t log π(a_t|s_t) · (G_t - mean G) / (std G + eps),
    G_t the discounted return from step t."""
    returns, running = [], 0.0
    for reward in reversed(rewards):
        running = reward + gamma * running
        returns.insert(0, running)
    returns = np.asarray(returns)
    normalised = (returns - returns.mean()) / (returns.std(ddof=1) + eps)
    return -(np.asarray(log_probs) * normalised).sum()


def test_reinforce_runs_and_learns_on_minigrad():
    env = TinyCartPole()
    program = reinforce_program(minigrad, env)
    before = _parameters(program.policy)
    running_reward = program.main(3)
    assert math.isfinite(running_reward) and running_reward > 0
    after = _parameters(program.policy)
    for old, new in zip(before, after):
        assert not np.array_equal(old, new)
    for parameter in program.policy.parameters():
        assert np.isfinite(parameter.grad.detach().numpy()).all()


def test_reinforce_loss_is_the_formula_and_adam_moves_each_weight():
    env = TinyCartPole()
    program = reinforce_program(minigrad, env)
    _play_episode(program, env)
    policy = program.policy
    assert len(policy.rewards) == len(policy.saved_log_probs) > 2
    assert all(log_prob.shape == (1,) for log_prob in policy.saved_log_probs)
    log_probs = [log_prob.item() for log_prob in policy.saved_log_probs]
    assert all(lp <= 0 for lp in log_probs)
    loss = _expected_loss(log_probs, list(policy.rewards), program.args.gamma, program.eps)
    assert math.isfinite(loss)

    # Check the loss finish_episode builds (its value reaches backward through cat/sum).
    seen = []
    original_cat = minigrad.cat

    def recording_cat(tensors, *args, **kwargs):
        joined = original_cat(tensors, *args, **kwargs)
        seen.append(joined.detach().sum().item())
        return joined

    before = _parameters(policy)
    minigrad.cat = recording_cat
    try:
        program.finish_episode()
    finally:
        minigrad.cat = original_cat
    assert seen == [pytest.approx(loss, rel=1e-5, abs=1e-6)]
    # Adam's first step moves each weight by lr·g/(|g| + ε): ±0.01 where its gradient is
    # not tiny.
    for old, new, parameter in zip(before, _parameters(policy), policy.parameters()):
        gradient = np.asarray(parameter.grad.detach().numpy(), dtype=np.float64)
        big = np.abs(gradient) > 1e-5
        np.testing.assert_allclose(np.abs(new - old)[big], 0.01, rtol=1e-3)
    assert policy.rewards == [] and policy.saved_log_probs == []


def test_reinforce_repeats_with_the_same_seed():
    runs = []
    for _ in range(2):
        program = reinforce_program(minigrad, TinyCartPole())
        program.main(2)
        runs.append(_parameters(program.policy))
    for first, second in zip(*runs):
        np.testing.assert_array_equal(first, second)


def _replayed(torch, actions: list[int]):
    """The library's Categorical, except that sample() hands out the recorded actions."""
    base = _from(torch, "distributions", "Categorical")
    queue = list(actions)

    class Replayed(base):
        def sample(self, sample_shape=()):
            return torch.tensor([queue.pop(0)])

    return Replayed


def _replay(torch, weights, states, actions, rewards):
    """select_action over the recorded states (dropout off), then finish_episode."""
    program = reinforce_program(torch, TinyCartPole(), Categorical=_replayed(torch, actions))
    with torch.no_grad():
        for parameter, values in zip(program.policy.parameters(), weights):
            parameter.copy_(torch.tensor(values, dtype=parameter.dtype))
    program.policy.eval()
    for state in states:
        program.select_action(state)
    program.policy.rewards.extend(rewards)
    log_probs = [log_prob.item() for log_prob in program.policy.saved_log_probs]
    program.finish_episode()
    return np.asarray(log_probs), _parameters(program.policy)


def test_reinforce_matches_pytorch(real_torch):
    env = TinyCartPole()
    program = reinforce_program(minigrad, env)
    program.policy.eval()
    weights = _parameters(program.policy)
    states, actions, rewards = [], [], []
    state, _ = env.reset()
    for _ in range(60):
        states.append(state)
        actions.append(program.select_action(state))
        state, reward, terminated, truncated, _ = env.step(actions[-1])
        rewards.append(reward)
        if terminated or truncated:
            break
    mine = _replay(minigrad, weights, states, actions, rewards)
    theirs = _replay(real_torch, weights, states, actions, rewards)
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-5, atol=1e-6)
    for got, expected in zip(mine[1], theirs[1]):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)


# --------------------------------------------------------------------------- VAE


def vae_program(torch):
    """vae/main.py's model and loss with `torch` the library given."""
    nn = torch.nn
    F = torch.nn.functional

    # ---- as the file has it
    class VAE(nn.Module):
        def __init__(self):
            super(VAE, self).__init__()

            self.fc1 = nn.Linear(784, 400)
            self.fc21 = nn.Linear(400, 20)
            self.fc22 = nn.Linear(400, 20)
            self.fc3 = nn.Linear(20, 400)
            self.fc4 = nn.Linear(400, 784)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar):
            std = torch.exp(0.5 * logvar)
            eps = torch.randn_like(std)
            return mu + eps * std

        def decode(self, z):
            h3 = F.relu(self.fc3(z))
            return torch.sigmoid(self.fc4(h3))

        def forward(self, x):
            mu, logvar = self.encode(x.view(-1, 784))
            z = self.reparameterize(mu, logvar)
            return self.decode(z), mu, logvar

    # Reconstruction + KL divergence losses summed over all elements and batch
    def loss_function(recon_x, x, mu, logvar):
        BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction="sum")

        # see Appendix B from VAE paper:
        # Kingma and Welling. Auto-Encoding Variational Bayes. ICLR, 2014
        # https://arxiv.org/abs/1312.6114
        # 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
        KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())

        return BCE + KLD

    return SimpleNamespace(VAE=VAE, loss_function=loss_function)


_vae_rng = np.random.default_rng(784)
IMAGES = _vae_rng.uniform(size=(8, 1, 28, 28))  # the made-up batch, in [0, 1] like MNIST
RECON = _vae_rng.uniform(0.05, 0.95, size=(8, 784))
MU = _vae_rng.normal(size=(8, 20))
LOGVAR = _vae_rng.normal(scale=0.5, size=(8, 20))


def test_vae_trains_on_minigrad():
    minigrad.manual_seed(1)
    program = vae_program(minigrad)
    model = program.VAE()
    optimizer = minigrad.optim.Adam(model.parameters(), lr=1e-3)
    data = minigrad.tensor(IMAGES, dtype=minigrad.float32)
    losses = []
    for _ in range(4):  # the body of train(epoch), on one made-up batch
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = program.loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        losses.append(loss.item())
        optimizer.step()
    assert recon_batch.shape == (8, 784) and mu.shape == logvar.shape == (8, 20)
    assert all(math.isfinite(value) and value > 0 for value in losses)
    assert losses[-1] < losses[0]


def test_vae_kld_is_kl_divergence_of_normals():
    """KLD = -½Σ(1 + log σ² - μ² - σ²) is KL(N(μ, σ²) ‖ N(0, 1)) summed, value and gradients."""
    program = vae_program(minigrad)
    recon, images = minigrad.tensor(RECON), minigrad.tensor(IMAGES)
    bce = minigrad.nn.functional.binary_cross_entropy(recon, images.view(-1, 784), reduction="sum")

    def leaves():
        return (
            minigrad.tensor(MU, requires_grad=True),
            minigrad.tensor(LOGVAR, requires_grad=True),
        )

    mu, logvar = leaves()
    kld = program.loss_function(recon, images, mu, logvar) - bce  # BCE + KLD, less BCE
    kld.backward()
    mu2, logvar2 = leaves()
    std = (0.5 * logvar2).exp()
    kl = D.kl_divergence(D.Normal(mu2, std), D.Normal(0.0, 1.0)).sum()
    kl.backward()
    assert kl.item() == pytest.approx(kld.item(), rel=1e-10, abs=1e-10)
    np.testing.assert_allclose(mu2.grad.numpy(), mu.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(logvar2.grad.numpy(), logvar.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_vae_reparameterize_is_normal_rsample():
    model = vae_program(minigrad).VAE()
    mu, logvar = minigrad.tensor(MU), minigrad.tensor(LOGVAR)
    minigrad.manual_seed(5)
    z = model.reparameterize(mu, logvar)
    minigrad.manual_seed(5)
    drawn = D.Normal(mu, (0.5 * logvar).exp()).rsample()
    np.testing.assert_allclose(drawn.numpy(), z.numpy(), rtol=1e-12, atol=1e-12)


def test_vae_loss_matches_pytorch(real_torch):
    def run(torch):
        program = vae_program(torch)
        recon = torch.tensor(RECON, dtype=torch.float64, requires_grad=True)
        mu = torch.tensor(MU, dtype=torch.float64, requires_grad=True)
        logvar = torch.tensor(LOGVAR, dtype=torch.float64, requires_grad=True)
        images = torch.tensor(IMAGES, dtype=torch.float64)
        loss = program.loss_function(recon, images, mu, logvar)
        loss.backward()
        return [loss.detach().numpy()] + [t.grad.numpy() for t in (recon, mu, logvar)]

    for got, expected in zip(run(minigrad), run(real_torch)):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)
