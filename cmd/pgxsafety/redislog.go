package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// redisLogger sends the go-redis client's own messages (pool and dial
// errors, otherwise printed as plain text on stderr) into the JSON log as
// warnings named "redis". Messages never hold the URL's password: the
// client logs addresses, not credentials.
type redisLogger struct{ log *zap.Logger }

// Printf implements go-redis' internal logging interface.
func (l redisLogger) Printf(_ context.Context, format string, v ...any) {
	l.log.Warn(strings.TrimSpace(fmt.Sprintf(format, v...)))
}

// useZapForRedis routes every go-redis client's log lines through log.
// go-redis has one process-wide logger.
func useZapForRedis(log *zap.Logger) {
	redis.SetLogger(redisLogger{log: log.Named("redis")})
}
