package main

import (
	"context"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestRedisLogsGoThroughZap(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	redisLogger{log: zap.New(core).Named("redis")}.Printf(context.Background(), "redis: %s failed: %v\n", "dial", "connection refused")
	entries := logs.All()
	if len(entries) != 1 {
		t.Fatalf("got %d log entries, want 1", len(entries))
	}
	e := entries[0]
	if e.LoggerName != "redis" || e.Level != zap.WarnLevel || e.Message != "redis: dial failed: connection refused" {
		t.Errorf("entry = %s %s %q", e.LoggerName, e.Level, e.Message)
	}
}
