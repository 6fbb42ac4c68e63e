"""Endpoints and error bodies of local and routed OpenAI-compatible servers, for `routes=`.

Each function returns the extra routes with which `FakeModelServer` imitates that server's way
of telling its context window (shapes as the servers document them):

    FakeModelServer(routes=llamacpp_routes(8192), overflow_body=llamacpp_overflow_body)
"""

from __future__ import annotations

from typing import Any

from .protocols import context_length_body


def llamacpp_routes(n_ctx: int) -> dict:
    props = {
        "default_generation_settings": {"n_ctx": n_ctx, "params": {"temperature": 0.8}},
        "total_slots": 1,
        "model_path": "/models/qwen2.5-coder-7b-q4_k_m.gguf",
        "chat_template": "...",
    }
    return {("GET", "/props"): lambda rec: (200, props)}


def ollama_routes(context_length: int, num_ctx: int | None = None) -> dict:
    parameters = 'stop "<|im_start|>"\nstop "<|im_end|>"'
    if num_ctx is not None:
        parameters += f"\nnum_ctx {num_ctx}"

    def show(rec) -> tuple[int, Any]:
        if not isinstance(rec.body, dict) or not (rec.body.get("model") or rec.body.get("name")):
            return 400, {"error": "model is required"}
        return 200, {
            "modelfile": "FROM qwen2.5-coder",
            "parameters": parameters,
            "template": "...",
            "details": {"family": "qwen2", "parameter_size": "7.6B"},
            "model_info": {
                "general.architecture": "qwen2",
                "qwen2.context_length": context_length,
                "qwen2.embedding_length": 3584,
            },
        }

    return {("POST", "/api/show"): show}


def vllm_routes(model: str, max_model_len: int) -> dict:
    entry = {
        "id": model,
        "object": "model",
        "created": 0,
        "owned_by": "vllm",
        "root": model,
        "parent": None,
        "max_model_len": max_model_len,
        "permission": [],
    }
    return {("GET", "/v1/models"): lambda rec: (200, {"object": "list", "data": [entry]})}


def lmstudio_routes(model: str, loaded_context_length: int, max_context_length: int = 131072) -> dict:
    entries = [
        {
            "id": "text-embedding-nomic-embed-text-v1.5",
            "type": "embeddings",
            "state": "not-loaded",
            "max_context_length": 2048,
        },
        {
            "id": model,
            "object": "model",
            "type": "llm",
            "publisher": "qwen",
            "arch": "qwen2",
            "state": "loaded",
            "max_context_length": max_context_length,
            "loaded_context_length": loaded_context_length,
        },
    ]
    return {("GET", "/api/v0/models"): lambda rec: (200, {"object": "list", "data": entries})}


def openrouter_routes(model: str, context_length: int) -> dict:
    entries = [
        {"id": "openai/gpt-4o", "context_length": 128000, "top_provider": {"context_length": 128000}},
        {
            "id": model,
            "name": model,
            "context_length": context_length,
            "top_provider": {"context_length": context_length, "max_completion_tokens": 8192},
        },
    ]
    return {("GET", "/api/v1/models"): lambda rec: (200, {"data": entries})}


def llamacpp_overflow_body(protocol: str, model: str, window: int, prompt_tokens: int) -> dict:
    """llama.cpp's HTTP 400 for a prompt over its `-c` (the window is only in `n_ctx`)."""
    if protocol != "chat":
        return context_length_body(protocol, model, window, prompt_tokens)
    return {
        "error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": prompt_tokens,
            "n_ctx": window,
        }
    }
