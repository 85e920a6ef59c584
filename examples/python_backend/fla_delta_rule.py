"""Bring your own op: flash-linear-attention's naive delta rule, registered as a memcap backend.

    PYTHONPATH=build/python /usr/bin/python3 examples/python_backend/fla_delta_rule.py   # from the build tree

`delta_rule_recurrence` is the token-by-token delta rule of flash-linear-attention's reference
implementation (fla-org/flash-linear-attention, fla/ops/delta_rule/naive.py, `delta_rule_recurrence`;
the algorithm, with its signature, head-first layout (B, H, T, K) and its q * K^-0.5, written
again here): for each token, the value's error against the state's read of k, scaled by beta, is
added along k, and o_t reads the updated state with q_t. memcap.register_memory takes it as an op
(memcap.op_memory) and runs it through the harness beside the built-in `delta` (the same rule,
M += beta (v - M k) k^T): `python/tests/test_fla_op.py` checks that the two read the same within
1e-5 and score the same on every cell. Needs torch (Debian: apt-get install python3-torch).
"""
import torch

import memcap


def delta_rule_recurrence(q, k, v, beta, initial_state=None, output_final_state=True):
    """fla's naive delta rule: q, k (B, H, T, K), v (B, H, T, V), beta (B, H, T), state (B, H, K, V)."""
    dtype = q.dtype
    b, h, length, d_k = q.shape
    q, k, v, beta = (x.float() for x in (q, k, v, beta))
    S = torch.zeros(b, h, d_k, v.shape[-1], dtype=v.dtype)
    if initial_state is not None:
        S = S + initial_state
    q = q * d_k ** -0.5
    o = torch.zeros_like(v)
    for t in range(length):
        k_t, v_t = k[:, :, t], v[:, :, t]
        error = (v_t - torch.einsum("bhk,bhkv->bhv", k_t, S)) * beta[:, :, t, None]
        S = S + k_t[..., :, None] * error[..., None, :]
        o[:, :, t] = torch.einsum("bhk,bhkv->bhv", q[:, :, t], S)
    return o.to(dtype), (S if output_final_state else None)


def register(name="fla_delta"):
    # head-first, as fla's naive ops; q_scale="sqrt_k" undoes their q * K^-0.5, so reads are the state's
    memcap.register_memory(name, delta_rule_recurrence, op_options={"layout": "head", "q_scale": "sqrt_k", "tensors": "torch"})


if __name__ == "__main__":
    register()
    df = memcap.run(memories=["fla_delta", "delta:beta=1"], tasks="assoc_recall", n=[8, 32, 64], d=16, seeds=3,
                    progress=False)
    print(df.groupby(["memory_spec", "n"]).accuracy_frac.mean().unstack())
