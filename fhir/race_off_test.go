//go:build !race

package fhir_test

// raceBuild reports whether the tests run with the race detector.
const raceBuild = false
