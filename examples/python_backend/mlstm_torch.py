"""Bring your own op: an mLSTM cell (xLSTM's matrix memory) in torch, registered as a memcap backend.

    PYTHONPATH=build/python /usr/bin/python3 examples/python_backend/mlstm_torch.py   # from the build tree

The mLSTM's recurrence (Beck et al. 2024, "xLSTM: Extended Long Short-Term Memory", its matrix
memory; written here in flash-linear-attention's op signature, seq-first): with forget gate
f_t = exp(g_t) and input gate i_t = beta_t,

    C_t = f_t C_{t-1} + i_t k_t v_t^T        n_t = f_t n_{t-1} + i_t k_t
    o_t = C_t^T q_t / max(|n_t . q_t|, 1)

The state is C (K x V) and the normaliser n (K): one (K, V + 1) array per head, its last column n
(state_shape and state_floats say so). memcap.register_memory takes the op as it is
(memcap.op_memory); `python/tests/test_fla_op.py` checks it through the harness. Needs torch.
"""
import torch

import memcap


def mlstm(q, k, v, g, beta, initial_state, output_final_state=True):
    """q, k (B, T, H, K), v (B, T, H, V), g and beta (B, T, H); state (B, H, K, V + 1)."""
    C, n = initial_state[..., :-1].clone(), initial_state[..., -1].clone()
    o = torch.zeros_like(v)
    for t in range(q.shape[1]):
        f, i = torch.exp(g[:, t])[..., None], beta[:, t][..., None]
        C = f[..., None] * C + i[..., None] * k[:, t, :, :, None] * v[:, t, :, None, :]
        n = f * n + i * k[:, t]
        norm = torch.clamp(torch.einsum("bhk,bhk->bh", n, q[:, t]).abs(), min=1.0)
        o[:, t] = torch.einsum("bhkv,bhk->bhv", C, q[:, t]) / norm[..., None]
    return o, (torch.cat([C, n[..., None]], dim=-1) if output_final_state else None)


def register(name="mlstm_torch"):
    memcap.register_memory(name, mlstm, state_floats=lambda d_key, d_value, budget: d_key * (d_value + 1),
                           op_options={"tensors": "torch", "state_shape": lambda d_key, d_value: (d_key, d_value + 1)})


if __name__ == "__main__":
    register()
    df = memcap.run(memories=["mlstm_torch", "linear"], tasks="assoc_recall", n=[8, 32, 64], d=16, seeds=3,
                    progress=False)
    print(df.groupby(["memory_spec", "n"]).accuracy_frac.mean().unstack())
