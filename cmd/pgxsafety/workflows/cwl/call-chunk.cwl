#!/usr/bin/env cwl-runner
# One job: pgxsafety call --chunk K/N, writing its part of the calls table
# (the header only in part 1) and its samples' answers.
cwlVersion: v1.2
class: CommandLineTool
label: pgxsafety call of one chunk of samples
requirements:
  ResourceRequirement:
    coresMin: 1
    ramMin: 512
arguments:
  - position: 1
    valueFrom: $(inputs.pgxsafety.path)
  - position: 2
    valueFrom: call
  - position: 3
    valueFrom: $(inputs.vcf.path)
  - position: 4
    prefix: --chunk
    valueFrom: $(inputs.chunk.contents)
  - position: 5
    prefix: --format
    valueFrom: tsv
  - position: 6
    prefix: --out
    valueFrom: calls.tsv
  - position: 7
    prefix: --per-sample
    valueFrom: per-sample
inputs:
  pgxsafety: File
  vcf:
    type: File
    secondaryFiles:
      - pattern: .tbi
        required: false
      - pattern: .csi
        required: false
  chunk:
    type: File
    loadContents: true
  samples_file:
    type: File?
    inputBinding:
      position: 10
      prefix: --samples-file
  per_sample_format:
    type: string
    default: json
    inputBinding:
      position: 11
      prefix: --per-sample-format
  min_gq:
    type: int?
    inputBinding:
      position: 12
      prefix: --min-gq
  min_dp:
    type: int?
    inputBinding:
      position: 13
      prefix: --min-dp
  samples_per_pass:
    type: int?
    inputBinding:
      position: 14
      prefix: --samples-per-pass
outputs:
  table:
    type: File
    outputBinding:
      glob: calls.tsv
  per_sample:
    type: Directory
    outputBinding:
      glob: per-sample
