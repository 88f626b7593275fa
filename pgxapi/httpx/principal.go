package httpx

import (
	"context"

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

type principalKey struct{}

// WithPrincipal returns a context carrying the authenticated caller.
func WithPrincipal(ctx context.Context, p audit.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// Principal returns the authenticated caller of the request, and false when
// the request was not authenticated (only the unauthenticated metadata
// endpoints and tests see that).
func Principal(ctx context.Context) (audit.Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(audit.Principal)
	return p, ok
}

// PrincipalOrAnonymous returns the caller, or the subject "anonymous" when
// none was authenticated, for audit entries.
func PrincipalOrAnonymous(ctx context.Context) audit.Principal {
	if p, ok := Principal(ctx); ok {
		return p
	}
	return audit.Principal{Subject: "anonymous"}
}
