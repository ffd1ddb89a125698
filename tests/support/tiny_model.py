"""A tiny random BERT in ONNX plus its own tokenizer.json, built by the tests themselves.

Same interface as the real model (input_ids, attention_mask, optional token_type_ids ->
last_hidden_state), two layers, hidden 32, so the whole embedding pipeline — load, batch, pool,
normalise, cache, helper process, fallback — runs in every CI without a 118 MB download.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

WORDS = (
    "checkout writes go through svc checkout on node port the a of to and in is for service host "
    "database replica primary failover latency timeout incident deploy rollback cache queue worker "
    "query passage куда пишет оформление заказа где живёт монга mongodb runs binance api rate limits"
).split()


def build_tokenizer(path: Path) -> None:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3}
    for word in WORDS + [":", ".", ",", "-"] + [str(d) for d in range(10)]:
        vocab.setdefault(word, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tok.save(str(path))


def build_onnx(path: Path, vocab: int, hidden: int = 32, heads: int = 2, layers: int = 2,
               token_types: bool = True, seed: int = 7, max_len: int = 512) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def w(name, *shape, scale=0.2):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def const(name, value, dtype=np.int64):
        inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    def node(op, inputs, out, **attrs):
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def layer_norm(x, name):
        inits.append(numpy_helper.from_array(np.ones(hidden, np.float32), name + "_g"))
        inits.append(numpy_helper.from_array(np.zeros(hidden, np.float32), name + "_b"))
        return node("LayerNormalization", [x, name + "_g", name + "_b"], name, axis=-1, epsilon=1e-12)

    d = hidden // heads
    const("zero", 0); const("one", 1); const("axes1", [1]); const("axes12", [1, 2])
    emb = node("Gather", [w("word_emb", vocab, hidden, scale=1.0), "input_ids"], "emb_words")
    shape = node("Shape", ["input_ids"], "ids_shape")
    seq_len = node("Gather", [shape, "one"], "seq_len", axis=0)
    positions = node("Range", ["zero", seq_len, "one"], "positions")
    pos = node("Gather", [w("pos_emb", max_len, hidden), positions], "emb_pos")
    x = node("Add", [emb, pos], "emb_sum")
    if token_types:
        x = node("Add", [x, node("Gather", [w("type_emb", 2, hidden), "token_type_ids"], "emb_type")], "emb_all")
    x = layer_norm(x, "emb_ln")
    maskf = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    inv = node("Sub", [const("onef", 1.0, np.float32), maskf], "mask_inv")
    bias = node("Mul", [node("Unsqueeze", [inv, "axes12"], "mask_4d"), const("neg", -10000.0, np.float32)],
                "mask_bias")
    split_shape = const("split_shape", [0, -1, heads, d])
    merge_shape = const("merge_shape", [0, -1, hidden])
    scale = const("scale", 1.0 / np.sqrt(d), np.float32)
    for i in range(layers):
        p = f"l{i}_"

        def proj(name, src, n_in=hidden, n_out=hidden):
            mm = node("MatMul", [src, w(p + name + "_w", n_in, n_out)], p + name + "_mm")
            return node("Add", [mm, w(p + name + "_b", n_out, scale=0.02)], p + name)

        def heads_of(t, name, perm):
            return node("Transpose", [node("Reshape", [t, split_shape], p + name + "_r")], p + name + "_t",
                        perm=perm)

        q = heads_of(proj("q", x), "qh", [0, 2, 1, 3])
        k = heads_of(proj("k", x), "kh", [0, 2, 3, 1])
        v = heads_of(proj("v", x), "vh", [0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [q, k], p + "qk"), scale], p + "qk_s"), bias], p + "scores")
        ctx = node("MatMul", [node("Softmax", [scores], p + "probs", axis=-1), v], p + "ctx")
        ctx = node("Reshape", [node("Transpose", [ctx], p + "ctx_t", perm=[0, 2, 1, 3]), merge_shape], p + "ctx_m")
        x = layer_norm(node("Add", [x, proj("o", ctx)], p + "res1"), p + "ln1")
        ff = node("Relu", [proj("ff1", x, hidden, hidden * 2)], p + "ff_act")
        x = layer_norm(node("Add", [x, proj("ff2", ff, hidden * 2, hidden)], p + "res2"), p + "ln2")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="out"))
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
              for n in (["input_ids", "attention_mask"] + (["token_type_ids"] if token_types else []))]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", hidden])
    graph = helper.make_graph(nodes, "tiny_bert", inputs, [output], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def build_tiny_model(directory: Path, token_types: bool = True, seed: int = 7) -> Path:
    """Write model.onnx and tokenizer.json into `directory` and return it."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    build_tokenizer(directory / "tokenizer.json")
    from tokenizers import Tokenizer

    vocab = Tokenizer.from_file(str(directory / "tokenizer.json")).get_vocab_size()
    build_onnx(directory / "model.onnx", vocab, token_types=token_types, seed=seed)
    return directory
