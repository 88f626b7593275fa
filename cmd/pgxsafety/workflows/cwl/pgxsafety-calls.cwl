#!/usr/bin/env cwl-runner
# Biobank-scale pharmacogene calls with pgxsafety (docs/workflows.md).
# Scatters "pgxsafety call --chunk K/N" over N parts of the samples of one
# multi-sample VCF (plain or bgzip; BGZF with a .tbi or .csi beside it is
# read by region), then gathers one calls table and one directory of
# per-sample answers.
cwlVersion: v1.2
class: Workflow
label: pgxsafety calls of a multi-sample VCF, scattered over sample chunks
requirements:
  ScatterFeatureRequirement: {}

inputs:
  pgxsafety:
    type: File
    doc: The static pgxsafety binary (CGO_ENABLED=0 go build ./cmd/pgxsafety), executable.
  vcf:
    type: File
    doc: A GRCh38 VCF, plain or bgzip-compressed (BCF is not read; convert it first).
    secondaryFiles:
      - pattern: .tbi
        required: false
      - pattern: .csi
        required: false
  chunks:
    type: int
    doc: The number of jobs (N) the samples are split over; at least 1.
  samples_file:
    type: File?
    doc: Call only the samples named in this file, one a line (default every sample).
  per_sample_format:
    type: string
    default: json
    doc: The format of the per-sample answers (pgxsafety call --per-sample-format json, fhir or html).
  min_gq:
    type: int?
    doc: Genotype quality below which a position is a no-call (pgxsafety call --min-gq).
  min_dp:
    type: int?
    doc: Read depth below which a position is a no-call (pgxsafety call --min-dp).
  samples_per_pass:
    type: int?
    doc: Samples called per reading of the file in a job (pgxsafety call --samples-per-pass; memory grows with it).

outputs:
  calls_table:
    type: File
    doc: One row per sample and gene, header once (docs/workflows.md lists the columns).
    outputSource: gather/calls_table
  per_sample:
    type: Directory
    doc: Each sample's answer, SAMPLE.json (or SAMPLE.fhir.json, SAMPLE.html by per_sample_format).
    outputSource: gather/per_sample

steps:
  split:
    run: split-chunks.cwl
    in:
      chunks: chunks
    out: [chunk_specs]
  call:
    run: call-chunk.cwl
    scatter: chunk
    in:
      pgxsafety: pgxsafety
      vcf: vcf
      chunk: split/chunk_specs
      samples_file: samples_file
      per_sample_format: per_sample_format
      min_gq: min_gq
      min_dp: min_dp
      samples_per_pass: samples_per_pass
    out: [table, per_sample]
  gather:
    run: gather.cwl
    in:
      tables: call/table
      dirs: call/per_sample
    out: [calls_table, per_sample]
