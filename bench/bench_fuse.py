"""Attention fusion for the shared int8 e5 graph, measured and NOT adopted (the >= 30 passages/s try).

    KYB_MODEL=../shared/models/multilingual-e5-small python bench/bench_fuse.py

The shared model.onnx was written by hand, so onnxruntime's optimizer does not fuse its attention.
This script rewrites each layer's Reshape/Transpose(Q,K,V) -> MatMul -> Div -> Add(mask) -> Softmax
-> MatMul -> Transpose/Reshape, matched structurally (no node names; all layers or none), into:
  mha    MultiHeadAttention(q, k, v, qkv_bias, key_padding_mask int32)   (com.microsoft)
  qattn  the same, with the three int8 Q/K/V MatMulInteger folded in: QAttention(uint8 input,
         int8 weights [D, 3D], per-column scales/zero points, bias, mask)
  flash  mha, but with no mask when the run has no padding (an If on min(attention_mask) == 1):
         onnxruntime's CPU flash-attention path, taken only without a mask
and prints per graph: cosine vs the original for texts embedded alone and in a padded batch,
passages/s (2 threads, wall, best/median of 5 interleaved) and passages per CPU-second (1 thread:
less sensitive to other load), plus the rewrite and load times. Needs `onnx` (test extra).
"""

from __future__ import annotations

import copy
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

MS_DOMAIN = "com.microsoft"
MIN_MASK = -1e4  # an additive mask at least this negative is exactly 0 after softmax in float32


class _Graph:
    """Producers, consumers and constants of an ONNX graph, for matching."""

    def __init__(self, graph) -> None:
        from onnx import numpy_helper

        self.graph = graph
        self.producer = {out: node for node in graph.node for out in node.output}
        self.consumers: dict[str, list] = {}
        for node in graph.node:
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)
        self.outputs = {o.name for o in graph.output}
        self.consts = {init.name: init for init in graph.initializer}
        self._np = numpy_helper
        for node in graph.node:  # Constant nodes count as constants too
            if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
                self.consts[node.output[0]] = node.attribute[0].t

    def const(self, name: str):
        init = self.consts.get(name)
        return None if init is None else self._np.to_array(init)

    def only_use(self, name: str, node) -> bool:
        """`name` feeds `node` alone and is no graph output: safe to remove with the pattern."""
        users = self.consumers.get(name, [])
        return name not in self.outputs and len(users) == 1 and users[0] is node

    def parent(self, node, index: int, op: str):
        if index >= len(node.input):
            return None
        found = self.producer.get(node.input[index])
        return found if found is not None and found.op_type == op else None


def _attr(node, name: str, default=None):
    from onnx import helper

    for attr in node.attribute:
        if attr.name == name:
            return helper.get_attribute_value(attr)
    return default


def _scalar(g: _Graph, name: str) -> float | None:
    value = g.const(name)
    if value is None or value.size != 1:
        return None
    return float(value.reshape(()))


def _mask_source(g: _Graph, name: str, mask_input: str) -> bool:
    """True when `name` is (1 - float(attention_mask)) * big_negative shaped [B, 1, 1, S]: Cast,
    Sub, Unsqueeze(axes 1, 2) and Mul, in any order, each once, back to the graph's mask input."""
    seen: dict[str, object] = {}
    while name != mask_input:
        node = g.producer.get(name)
        if node is None or node.op_type in seen or node.op_type not in ("Cast", "Sub", "Unsqueeze", "Mul"):
            return False
        seen[node.op_type] = node
        if node.op_type == "Cast":
            if _attr(node, "to") != 1:  # FLOAT
                return False
            name = node.input[0]
        elif node.op_type == "Unsqueeze":
            axes = _attr(node, "axes")
            if axes is None and len(node.input) > 1:
                axes = g.const(node.input[1])
                axes = None if axes is None else [int(a) for a in axes.reshape(-1)]
            if axes is None or sorted(axes) != [1, 2]:
                return False
            name = node.input[0]
        elif node.op_type == "Sub":
            if _scalar(g, node.input[0]) != 1.0:
                return False
            name = node.input[1]
        else:  # Mul by a big negative constant, on either side
            a, b = node.input[0], node.input[1]
            value, name = (_scalar(g, b), a) if _scalar(g, b) is not None else (_scalar(g, a), b)
            if value is None or value > MIN_MASK:
                return False
    return set(seen) == {"Cast", "Sub", "Unsqueeze", "Mul"}


def _heads(g: _Graph, reshape, transpose, perm: list[int]):
    """(input, num_heads, head_size) of Reshape(x, [0, 0|-1, N, H]) -> Transpose(perm), or None."""
    if reshape is None or transpose is None or _attr(reshape, "allowzero", 0):
        return None
    if list(_attr(transpose, "perm", [])) != perm or not g.only_use(reshape.output[0], transpose):
        return None
    shape = g.const(reshape.input[1])
    if shape is None or shape.size != 4:
        return None
    shape = [int(s) for s in shape.reshape(-1)]
    if shape[0] != 0 or shape[1] not in (0, -1) or shape[2] <= 0 or shape[3] <= 0:
        return None
    return reshape.input[0], shape[2], shape[3]


def _match(g: _Graph, softmax, mask_input: str):
    """The layer's attention around `softmax` as a dict, or None when anything differs."""
    if _attr(softmax, "axis", -1) not in (-1, 3):
        return None
    add = g.parent(softmax, 0, "Add")
    if add is None or not g.only_use(add.output[0], softmax):
        return None
    for scaled_i, mask_i in ((0, 1), (1, 0)):
        scaled = g.producer.get(add.input[scaled_i])
        if scaled is not None and scaled.op_type in ("Div", "Mul") and _mask_source(g, add.input[mask_i], mask_input):
            break
    else:
        return None
    factor = _scalar(g, scaled.input[1])
    qk = g.parent(scaled, 0, "MatMul")
    if factor is None or factor == 0 or qk is None or not g.only_use(scaled.output[0], add) \
            or not g.only_use(qk.output[0], scaled):
        return None
    scale = 1.0 / factor if scaled.op_type == "Div" else factor
    q_t, k_t = g.parent(qk, 0, "Transpose"), g.parent(qk, 1, "Transpose")
    q = _heads(g, q_t and g.parent(q_t, 0, "Reshape"), q_t, [0, 2, 1, 3])
    k = _heads(g, k_t and g.parent(k_t, 0, "Reshape"), k_t, [0, 2, 3, 1])
    users = g.consumers.get(softmax.output[0], [])
    if q is None or k is None or len(users) != 1 or users[0].op_type != "MatMul" \
            or users[0].input[0] != softmax.output[0] or softmax.output[0] in g.outputs:
        return None
    pv = users[0]
    v_t = g.parent(pv, 1, "Transpose")
    v = _heads(g, v_t and g.parent(v_t, 0, "Reshape"), v_t, [0, 2, 1, 3])
    if v is None or q[1:] != k[1:] or q[1:] != v[1:] or not all(
            g.only_use(t.output[0], user) for t, user in ((q_t, qk), (k_t, qk), (v_t, pv))):
        return None
    heads, size = q[1], q[2]
    out_users = g.consumers.get(pv.output[0], [])
    if len(out_users) != 1 or out_users[0].op_type != "Transpose" or pv.output[0] in g.outputs:
        return None
    out_t = out_users[0]
    merge_users = g.consumers.get(out_t.output[0], [])
    if list(_attr(out_t, "perm", [])) != [0, 2, 1, 3] or len(merge_users) != 1 \
            or merge_users[0].op_type != "Reshape" or out_t.output[0] in g.outputs:
        return None
    merge = merge_users[0]
    shape = g.const(merge.input[1])
    if shape is None or shape.size != 3 or _attr(merge, "allowzero", 0):
        return None
    shape = [int(s) for s in shape.reshape(-1)]
    if shape[0] != 0 or not (shape[1:] in ([0, heads * size], [-1, heads * size]) or shape[1:] == [0, -1]):
        return None
    removed = [g.producer[t.input[0]] for t in (q_t, k_t, v_t)] + [q_t, k_t, v_t, qk, scaled, add,
                                                                    softmax, pv, out_t, merge]
    return {"q": q[0], "k": k[0], "v": v[0], "heads": heads, "size": size, "scale": scale,
            "output": merge.output[0], "removed": removed}


def _split_bias(g: _Graph, name: str, hidden: int):
    """(matmul output, bias constant) when `name` is Add(x, bias[hidden]) used only here, else None."""
    add = g.producer.get(name)
    if add is None or add.op_type != "Add" or len(g.consumers.get(name, [])) != 1 or name in g.outputs:
        return None
    for x, b in ((0, 1), (1, 0)):
        bias = g.const(add.input[b])
        if bias is not None and bias.shape == (hidden,) and add.input[x] not in g.consts:
            return add, add.input[x], bias
    return None


def fuse_attention(model) -> int:
    """Rewrite `model` (onnx.ModelProto) in place; return how many attention blocks were fused.
    All or nothing: when any Softmax does not match, the model is left exactly as it was."""
    import numpy as np
    from onnx import helper, numpy_helper

    graph = model.graph
    mask_input = next((i.name for i in graph.input if i.name == "attention_mask"), None)
    softmaxes = [n for n in graph.node if n.op_type == "Softmax"]
    if mask_input is None or not softmaxes:
        return 0
    g = _Graph(graph)
    matches = [_match(g, s, mask_input) for s in softmaxes]
    if any(m is None for m in matches):
        return 0
    mask_i32 = "kyb_fused/attention_mask_int32"
    fused = {}  # output name of each block's last Reshape -> its MultiHeadAttention node
    drop: set[str] = set()  # first output names of nodes to remove
    for i, m in enumerate(matches):
        hidden = m["heads"] * m["size"]
        inputs = [m["q"], m["k"], m["v"], ""]
        parts = [_split_bias(g, m[t], hidden) for t in ("q", "k", "v")]
        if all(parts) and len({p[0].output[0] for p in parts}) == 3:
            bias_name = f"kyb_fused/layer{i}/qkv_bias"
            bias = np.concatenate([p[2] for p in parts]).astype(np.float32)
            graph.initializer.append(numpy_helper.from_array(bias, bias_name))
            inputs = [p[1] for p in parts] + [bias_name]
            drop.update(p[0].output[0] for p in parts)
        fused[m["output"]] = helper.make_node(
            "MultiHeadAttention", inputs + [mask_i32], [m["output"]], name=f"kyb_fused/layer{i}/attention",
            domain=MS_DOMAIN, num_heads=m["heads"], scale=float(m["scale"]))
        drop.update(n.output[0] for n in m["removed"])
    kept = [helper.make_node("Cast", [mask_input], [mask_i32], name=mask_i32, to=6)]  # INT32
    for node in graph.node:
        if node.output[0] in fused:
            kept.append(fused[node.output[0]])
        elif node.output[0] not in drop:
            kept.append(copy.deepcopy(node))
    graph.ClearField("node")
    graph.node.extend(kept)
    _prune(graph)
    if not any(o.domain == MS_DOMAIN for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MS_DOMAIN, 1))
    return len(matches)


def _prune(graph) -> None:
    """Drop nodes and initializers nothing uses any more (the old mask chain, shape constants)."""
    wanted = {o.name for o in graph.output}
    kept = []
    for node in reversed(graph.node):
        if any(out in wanted for out in node.output):
            kept.append(node)
            wanted.update(i for i in node.input if i)
    if len(kept) != len(graph.node):
        kept = [copy.deepcopy(n) for n in reversed(kept)]
        graph.ClearField("node")
        graph.node.extend(kept)
    if any(init.name not in wanted for init in graph.initializer):
        inits = [copy.deepcopy(i) for i in graph.initializer if i.name in wanted]
        graph.ClearField("initializer")
        graph.initializer.extend(inits)


def _replace(model, repl: dict, drop: set, head: list | None = None, prune: bool = True) -> None:
    """Rebuild the node list: nodes whose first output is in `repl` are swapped, `drop` removed."""
    kept = list(head or [])
    for node in model.graph.node:
        if node.output[0] in repl:
            kept.append(repl[node.output[0]])
        elif node.output[0] not in drop:
            kept.append(copy.deepcopy(node))
    model.graph.ClearField("node")
    model.graph.node.extend(kept)
    if prune:  # _prune does not see names used only inside If branches
        _prune(model.graph)


def fold_qkv(model) -> int:
    """On a fuse_attention() graph: MatMulInteger x3 -> Cast -> Mul(scale) + MHA -> one QAttention."""
    from onnx import helper, numpy_helper

    g = _Graph(model.graph)
    repl, drop = {}, set()
    for node in model.graph.node:
        if node.op_type != "MultiHeadAttention" or not node.input[3]:
            continue
        weights, scales, zeros, shared = [], [], [], set()
        for name in node.input[:3]:
            mul = g.producer.get(name)
            cast = mul is not None and mul.op_type == "Mul" and g.parent(mul, 0, "Cast")
            mmi = cast and g.parent(cast, 0, "MatMulInteger")
            smul = mmi and g.parent(mul, 1, "Mul")
            if not (smul and len(mmi.input) == 4 and g.const(mmi.input[1]) is not None):
                return 0
            shared.add((mmi.input[0], mmi.input[2], smul.input[0]))
            weights.append(g.const(mmi.input[1]))
            zeros.append(g.const(mmi.input[3]))
            scales.append(g.const(smul.input[1]))
            drop.update(n.output[0] for n in (mul, cast, mmi, smul))
        if len(shared) != 1 or any(s is None for s in scales + zeros):
            return 0
        (x, x_zero, x_scale), = shared
        names = [node.name + s for s in ("/w", "/w_scale", "/w_zero")]
        for name, parts in zip(names, (weights, scales, zeros)):
            flat = np.concatenate([np.broadcast_to(p, (p.shape[0], p.shape[-1])) if p.ndim == 2 else
                                   np.broadcast_to(p.reshape(-1), (weights[0].shape[1],)) for p in parts],
                                  axis=-1)
            model.graph.initializer.append(numpy_helper.from_array(np.ascontiguousarray(flat), name))
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        repl[node.output[0]] = helper.make_node(
            "QAttention", [x, names[0], node.input[3], x_scale, names[1], node.input[4], x_zero, names[2]],
            [node.output[0]], name=node.name + "/q", domain=MS_DOMAIN, **attrs)
    if repl:
        _replace(model, repl, drop)
    return len(repl)


def flash_when_unpadded(model) -> int:
    """Each MHA becomes If(min(attention_mask) == 1, MHA without mask (flash path), MHA with mask)."""
    from onnx import TensorProto, helper, numpy_helper

    cond = "kyb_fused/no_padding"
    model.graph.initializer.append(numpy_helper.from_array(np.array(1, np.int64), "kyb_fused/one"))
    head = [helper.make_node("ReduceMin", ["attention_mask"], ["kyb_fused/mask_min"], keepdims=0),
            helper.make_node("Equal", ["kyb_fused/mask_min", "kyb_fused/one"], [cond])]
    repl = {}
    for node in model.graph.node:
        if node.op_type != "MultiHeadAttention":
            continue
        out = node.output[0]
        branches = []
        for suffix, keep in (("/flash", 4), ("/masked", 5)):
            branch = copy.deepcopy(node)
            del branch.input[keep:]
            branch.output[0] = out + suffix
            branches.append(helper.make_graph([branch], node.name + suffix, [],
                                              [helper.make_tensor_value_info(out + suffix, TensorProto.FLOAT, None)]))
        repl[out] = helper.make_node("If", [cond], [out], name=node.name + "/if",
                                     then_branch=branches[0], else_branch=branches[1])
    _replace(model, repl, set(), head, prune=False)
    return len(repl)


def main() -> None:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from bench_embed import make_passages

    model_dir = Path(os.environ.get("KYB_MODEL") or ROOT.parent / "shared" / "models" / "multilingual-e5-small")
    tmp = Path(tempfile.mkdtemp(prefix="kyb-fuse-"))
    t = time.perf_counter()
    import onnx
    t_import = time.perf_counter() - t
    graphs = {"original": model_dir / "model.onnx"}
    for name, steps in (("mha", ()), ("qattn", (fold_qkv,)), ("flash", (flash_when_unpadded,))):
        t = time.perf_counter()
        model = onnx.load(str(model_dir / "model.onnx"))
        t_load = time.perf_counter() - t
        fused = fuse_attention(model)
        extra = [step(model) for step in steps]
        t_fuse = time.perf_counter() - t - t_load
        graphs[name] = tmp / f"{name}.onnx"
        onnx.save(model, str(graphs[name]))
        print(f"{name}: {fused} attention blocks fused {extra}; onnx import {t_import:.2f} s, load "
              f"{t_load:.2f} s, rewrite {t_fuse:.2f} s, save {time.perf_counter() - t - t_load - t_fuse:.2f} s")
        if not fused:
            return

    def session(path, threads):
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.log_severity_level = 3
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    for name, path in graphs.items():
        t = time.perf_counter()
        session(path, 2)
        print(f"session build {name}: {time.perf_counter() - t:.2f} s")
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_truncation(512)
    long = ["passage: " + p for p in make_passages(64)]
    short = [p[:p.index(" ", 1000)] for p in long]

    def feed(texts):
        enc = tok.encode_batch(texts)
        ids = np.zeros((len(enc), max(len(e.ids) for e in enc)), np.int64)
        mask = np.zeros_like(ids)
        for i, e in enumerate(enc):
            ids[i, :len(e.ids)], mask[i, :len(e.ids)] = e.ids, 1
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}

    def vectors(sess, texts):
        f = feed(texts)
        hidden = sess.run(None, f)[0]
        pooled = (hidden * f["attention_mask"][:, :, None]).sum(1) / f["attention_mask"].sum(1)[:, None]
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    sessions = {name: session(path, 2) for name, path in graphs.items()}
    probe = ["query: куда пишет оформление заказа", "query: 9090", long[0], short[1],
             "passage: Деплой. " + "Все стримы настроены в терраформе, реестр образов в докере. " * 12]
    for name, sess in sessions.items():
        alone = [float(vectors(sess, [t])[0] @ vectors(sessions["original"], [t])[0]) for t in probe]
        batch = (vectors(sess, long[:14] + probe[:2]) * vectors(sessions["original"], long[:14] + probe[:2])).sum(1)
        print(f"cosine vs original, {name}: alone min {min(alone):.6f}, padded batch min {batch.min():.6f}")

    def measure(threads, clock):
        sess = {name: session(path, threads) for name, path in graphs.items()}
        for label, texts, bs in (("~251 tok, alone", short[:16], 1), ("~251 tok, pairs", short[:32], 2),
                                 ("~308 tok, alone", long[:16], 1), ("~251 tok, batch 16", short[:32], 16)):
            feeds = [feed(texts[i:i + bs]) for i in range(0, len(texts), bs)]
            rates = {name: [] for name in sess}
            for _ in range(5):  # interleaved, so load changes hit every graph alike
                for name, s in sess.items():
                    t = clock()
                    for f in feeds:
                        s.run(None, f)
                    rates[name].append(len(texts) / (clock() - t))
            print(f"  {label}: " + " | ".join(f"{n} {max(r):.1f} (med {statistics.median(r):.1f})"
                                               for n, r in rates.items())
                  + f"; load {open('/proc/loadavg').read().split()[0]}", flush=True)

    print("passages/s, 2 threads, wall clock, best (median) of 5:")
    measure(2, time.perf_counter)
    print("passages per CPU-second, 1 thread:")
    measure(1, time.process_time)


if __name__ == "__main__":
    main()
