//go:build !unix

package main

// lockWitness does nothing where flock is not available: replicas there
// need a witness file each.
func lockWitness(string) (func(), error) { return func() {}, nil }
