import pytest
import torch
import torch.nn.functional as F

from modlib.models import mlp
from modlib.training import adam, forward, stack, train_separately, train_seeds, unstack

M, N, STEPS = 5, 64, 60


def models(activation="relu"):
    out = []
    for seed in range(M):
        torch.manual_seed(seed)
        out.append(mlp(2, [8, 8, 8], 1, activation, init="playground").double())
    return out


@pytest.fixture
def batches():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(M, N, 2, generator=g, dtype=torch.float64)
    y = (x[..., 0] > 0).double()
    picks = torch.randint(N, (STEPS, M, 10), generator=g)

    def get(t):
        i = picks[t]
        return torch.gather(x, 1, i[..., None].expand(-1, -1, 2)), torch.gather(y, 1, i)

    return get


def loss(out, y):
    return F.binary_cross_entropy_with_logits(out[:, 0], y)


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_batched_seeds_equal_separate_runs(batches, activation):
    template, params = stack(models(activation))
    trained = train_seeds(template, params, batches, loss, steps=STEPS, lr=0.1, progress=False)
    reference = train_separately(models(activation), batches, loss, steps=STEPS, lr=0.1, progress=False)
    for m, ref in enumerate(reference):
        for name, p in ref.named_parameters():
            torch.testing.assert_close(trained[name][m], p.detach(), rtol=1e-10, atol=1e-12)
    # and training moved the parameters (the comparison is not between two untouched copies)
    assert (trained["0.weight"] - params["0.weight"]).abs().max() > 1e-3


def test_on_step_sees_every_step_and_unstack_round_trips(batches):
    template, params = stack(models())
    seen = []
    trained = train_seeds(template, params, batches, loss, steps=5, lr=0.1, progress=False,
                          on_step=lambda t, p: seen.append(t))
    assert seen == [0, 1, 2, 3, 4, 5]
    x = torch.randn(M, 7, 2, dtype=torch.float64)
    batched = forward(template, trained, x)
    for m in range(M):
        torch.testing.assert_close(unstack(template, trained, m).double()(x[m]), batched[m])


def test_negative_steps_fail(batches):
    template, params = stack(models())
    with pytest.raises(ValueError, match="steps=-3"):
        train_seeds(template, params, batches, loss, steps=-3, lr=0.1)


def _adam_run(device, steps=12):
    torch.manual_seed(0)
    model = mlp(6, [16, 16], 3).to(device)
    g = torch.Generator().manual_seed(1)
    data = [(torch.randn(8, 6, generator=g).to(device), torch.randint(3, (8,), generator=g).to(device))
            for _ in range(steps)]
    adam(lambda x, y: F.cross_entropy(model(x), y), model.parameters(), iter(data), steps=steps, lr=1e-2,
         clip=0.5, desc="test")
    return torch.cat([p.detach().flatten().cpu() for p in model.parameters()])


def test_adam_takes_the_given_number_of_steps():
    start = _adam_run("cpu", steps=0)
    one, many = _adam_run("cpu", steps=1), _adam_run("cpu", steps=12)
    assert not torch.equal(start, one) and not torch.allclose(one, many)
    with pytest.raises(ValueError, match="steps"):
        _adam_run("cpu", steps=-1)



@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_forward_is_vmap_bit_for_bit(activation):
    """`forward` runs the operations vmap of each member's `functional_call` runs, so the stored
    results made with vmap stay the numbers this code makes: outputs and gradients equal exactly."""
    from torch.func import functional_call, vmap

    nets = [mlp(2, [8, 8, 8], 1, activation, init="playground") for _ in range(M)]
    template, params = stack(nets)
    x = torch.randn(M, 10, 2, generator=torch.Generator().manual_seed(0))
    theirs = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    ours = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    out_theirs = vmap(lambda p, xi: functional_call(template, p, (xi,)))(theirs, x)
    out_ours = forward(template, ours, x)
    assert torch.equal(out_ours, out_theirs)
    (out_theirs.tanh().sum()).backward(), (out_ours.tanh().sum()).backward()
    assert all(torch.equal(ours[k].grad, theirs[k].grad) for k in params)


def test_stack_names_a_layer_it_cannot_batch():
    net = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 1))
    with pytest.raises(ValueError, match="BatchNorm1d"):
        stack([net])
