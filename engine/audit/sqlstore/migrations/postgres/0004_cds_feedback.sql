-- 0004_cds_feedback: CDS Hooks feedback (POST /cds-services/{id}/feedback),
-- kept beside the audit log: each item once, keyed by card uuid, outcome
-- and outcome time (feedback_key). Every stored item's post is in the
-- audit log (service.Feedback). Times are RFC 3339 with nanoseconds, UTC.
-- (Numbered 0004: 0003 is reserved for the transparency log of issue 13.)
CREATE TABLE cds_feedback (
    feedback_key      TEXT PRIMARY KEY,
    service_id        TEXT NOT NULL,
    card_uuid         TEXT NOT NULL,
    outcome           TEXT NOT NULL,
    outcome_timestamp TEXT NOT NULL,
    item              TEXT NOT NULL,
    issuer            TEXT NOT NULL,
    received_at       TEXT NOT NULL
);

CREATE INDEX cds_feedback_card ON cds_feedback (card_uuid);
