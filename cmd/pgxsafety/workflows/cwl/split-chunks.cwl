#!/usr/bin/env cwl-runner
# Writes N files chunk-000001 … chunk-N, each holding "K/N": the values of
# pgxsafety call --chunk, one per job (no JavaScript needed).
cwlVersion: v1.2
class: CommandLineTool
label: the --chunk values K/N of N jobs
baseCommand: [sh, -c]
arguments:
  - |
    set -eu
    n="$0"
    if [ "$n" -lt 1 ]; then echo "chunks must be at least 1, got $n" >&2; exit 1; fi
    k=1
    while [ "$k" -le "$n" ]; do
      printf '%s/%s' "$k" "$n" > "`printf 'chunk-%06d' "$k"`"
      k=`expr "$k" + 1`
    done
  - $(inputs.chunks)
inputs:
  chunks: int
outputs:
  chunk_specs:
    type: File[]
    outputBinding:
      glob: chunk-*
