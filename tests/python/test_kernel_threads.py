"""CPU kernels split across many threads: the elementwise loop aligns each thread's chunk to a multiple
of 64 elements (so the vector or scalar tail of a math function is the same whatever the thread
count); every size, including ones whose last chunks are shorter than that, must give NumPy's values
and the same bits as one thread. Many more threads than cores is still a valid OpenMP setting."""
import numpy as np
import pytest

import oar


@pytest.fixture
def threads():
    before = oar.get_num_threads()
    yield
    oar.set_num_threads(before)


@pytest.mark.parametrize("count", [2, 7, 63])
def test_elementwise_and_reductions_with_many_threads(threads, count):
    rng = np.random.default_rng(count)
    for n in (32769, 40000, 32768 + 63 * 64 + 5, 100003):
        a = rng.standard_normal(n).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        oar.set_num_threads(1)
        x, y = oar.tensor(a), oar.tensor(b)
        single = [(x + y).numpy(), x.exp().numpy(), (x * 2.5).numpy(), x.tanh().numpy()]
        oar.set_num_threads(count)
        many = [(x + y).numpy(), x.exp().numpy(), (x * 2.5).numpy(), x.tanh().numpy()]
        for got, want in zip(many, single):
            assert got.shape == (n,)
            np.testing.assert_array_equal(got, want)  # bit for bit, whatever the thread count
        np.testing.assert_allclose(many[1], np.exp(a.astype(np.float64)), rtol=2e-6)
        np.testing.assert_allclose(many[3], np.tanh(a.astype(np.float64)), rtol=2e-6, atol=1e-7)
        np.testing.assert_array_equal(many[0], a + b)
        assert abs(x.sum().item() - a.astype(np.float64).sum()) < 1e-3
