package service

// EncodedForTest holds the two forms encodeAnswer returns.
type EncodedForTest struct{ Sent, Audited []byte }

// EncodeAnswerForTest exposes encodeAnswer to the external tests.
func EncodeAnswerForTest(v any) (EncodedForTest, error) {
	sent, audited, err := encodeAnswer(v)
	return EncodedForTest{Sent: sent, Audited: audited}, err
}
