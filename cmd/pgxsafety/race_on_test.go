//go:build race

package main

// raceBuild reports whether the tests run with the race detector; the
// crash test then builds the binary with -race too, reusing the packages
// already compiled for the test.
const raceBuild = true
