package cdshooks

import "encoding/json"

// This file holds the CDS Hooks 2.0 wire types. Output types never carry
// null or empty values: optional fields are omitted when empty.

// Discovery is the GET /cds-services answer.
type Discovery struct {
	Services []ServiceDefinition `json:"services"`
}

// ServiceDefinition describes one CDS Service.
type ServiceDefinition struct {
	Hook              string            `json:"hook"`
	Title             string            `json:"title,omitempty"`
	Description       string            `json:"description"`
	ID                string            `json:"id"`
	Prefetch          map[string]string `json:"prefetch,omitempty"`
	UsageRequirements string            `json:"usageRequirements,omitempty"`
}

// Response is a CDS Service's answer: the cards (an empty array when there
// is nothing to say).
type Response struct {
	Cards []Card `json:"cards"`
}

// Card is one piece of guidance.
type Card struct {
	UUID              string       `json:"uuid"`
	Summary           string       `json:"summary"`
	Detail            string       `json:"detail,omitempty"`
	Indicator         string       `json:"indicator"`
	Source            Source       `json:"source"`
	Suggestions       []Suggestion `json:"suggestions,omitempty"`
	SelectionBehavior string       `json:"selectionBehavior,omitempty"`
	OverrideReasons   []Coding     `json:"overrideReasons,omitempty"`
	Links             []Link       `json:"links,omitempty"`
}

// Card indicators.
const (
	IndicatorInfo     = "info"
	IndicatorWarning  = "warning"
	IndicatorCritical = "critical"
)

// Source names where a card's guidance comes from.
type Source struct {
	Label string  `json:"label"`
	URL   string  `json:"url,omitempty"`
	Icon  string  `json:"icon,omitempty"`
	Topic *Coding `json:"topic,omitempty"`
}

// Coding is a CDS Hooks Coding.
type Coding struct {
	Code    string `json:"code"`
	System  string `json:"system,omitempty"`
	Display string `json:"display,omitempty"`
}

// Suggestion is a set of actions the user may accept.
type Suggestion struct {
	Label         string   `json:"label"`
	UUID          string   `json:"uuid,omitempty"`
	IsRecommended bool     `json:"isRecommended,omitempty"`
	Actions       []Action `json:"actions,omitempty"`
}

// Action is one change a suggestion makes.
type Action struct {
	Type        string          `json:"type"`
	Description string          `json:"description"`
	Resource    json.RawMessage `json:"resource,omitempty"`
	ResourceID  string          `json:"resourceId,omitempty"`
}

// Link is a link on a card.
type Link struct {
	Label      string `json:"label"`
	URL        string `json:"url"`
	Type       string `json:"type"`
	AppContext string `json:"appContext,omitempty"`
}

// hookRequest is the envelope of a hook call. Unknown keys are ignored;
// extension is kept.
type hookRequest struct {
	Hook              *string                    `json:"hook"`
	HookInstance      *string                    `json:"hookInstance"`
	FHIRServer        *string                    `json:"fhirServer"`
	FHIRAuthorization *fhirAuthorization         `json:"fhirAuthorization"`
	Context           json.RawMessage            `json:"context"`
	Prefetch          map[string]json.RawMessage `json:"prefetch"`
	Extension         map[string]json.RawMessage `json:"extension"`
}

// fhirAuthorization is the FHIR access token the client gives the service.
type fhirAuthorization struct {
	AccessToken string      `json:"access_token"`
	TokenType   string      `json:"token_type"`
	ExpiresIn   json.Number `json:"expires_in"`
	Scope       string      `json:"scope"`
	Subject     string      `json:"subject"`
	Patient     string      `json:"patient"`
}

// orderContext is the context of order-select and order-sign.
type orderContext struct {
	UserID      *string         `json:"userId"`
	PatientID   *string         `json:"patientId"`
	EncounterID *string         `json:"encounterId"`
	Selections  []string        `json:"selections"`
	DraftOrders json.RawMessage `json:"draftOrders"`
}

// feedbackRequest is the body of POST /cds-services/{id}/feedback.
type feedbackRequest struct {
	Feedback []feedbackItem `json:"feedback"`
}

// feedbackItem is the outcome of one card.
type feedbackItem struct {
	Card                string               `json:"card"`
	Outcome             string               `json:"outcome"`
	AcceptedSuggestions []acceptedSuggestion `json:"acceptedSuggestions,omitempty"`
	OverrideReason      *overrideReason      `json:"overrideReason,omitempty"`
	OutcomeTimestamp    string               `json:"outcomeTimestamp"`
}

type acceptedSuggestion struct {
	ID string `json:"id"`
}

type overrideReason struct {
	Reason      *Coding `json:"reason,omitempty"`
	UserComment string  `json:"userComment,omitempty"`
}

// FeedbackResponse is the answer to a feedback post.
type FeedbackResponse struct {
	// Stored counts the feedback items stored by this post; Duplicates
	// those already stored (same card, outcome and outcome time).
	Stored     int    `json:"stored"`
	Duplicates int    `json:"duplicates"`
	AuditLogID string `json:"audit_log_id"`
}
