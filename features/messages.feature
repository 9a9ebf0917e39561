Feature: Run-to-run messages
  Runs that work together send each other messages. Each recipient gets its
  own copy; its inbox lists the headers; reading one returns the body. The
  times a copy was delivered and read are set once and never change.

  Scenario: Messages need credentials
    When I send "GET /agent/messages/{unknown}" with no Authorization header
    Then the response is a problem with status 401 and code "authentication_required"

  @creates-runs @mock-control
  Scenario: A message reaches the recipient's inbox unread
    Given I create a run with the prompt "Migrate the schema"
    And I remember the run as "sender"
    And I create a run with the prompt "Update the API"
    And I remember the run as "recipient"
    When I send "POST /agent/messages" with the body {"to": ["{recipient}"], "subject": "Schema changed", "body": "Rebase first.", "sender_run_id": "{sender}"}
    Then the response status is 200
    And I remember the response field "message_ids.0" as "message"
    When I send "GET /agent/messages/{recipient}"
    Then the response is a list of 1 item
    And item 0 of the response has "delivered_at" null
    And item 0 of the response has "read_at" null
    When I send "GET /agent/messages/{sender}"
    Then the response is a list of 0 items

  @creates-runs @mock-control
  Scenario: Delivery and reading are recorded once
    Given I create a run with the prompt "Migrate the schema"
    And I remember the run as "sender"
    And I create a run with the prompt "Update the API"
    And I remember the run as "recipient"
    And I send "POST /agent/messages" with the body {"to": ["{recipient}"], "subject": "Schema changed", "body": "Rebase first.", "sender_run_id": "{sender}"}
    And I remember the response field "message_ids.0" as "message"
    When I send "POST /agent/messages/{message}/delivered"
    Then the response status is 204
    When I send "POST /agent/messages/{message}/read"
    Then the response status is 200
    And the response field "body" is "Rebase first."
    And the response field "message_id" is the remembered "message"
    And I remember the response field "read_at" as "first read"
    And I remember the response field "delivered_at" as "first delivery"
    When 2 poll intervals pass
    And I send "POST /agent/messages/{message}/delivered"
    And I send "POST /agent/messages/{message}/read"
    Then the response field "read_at" is the remembered "first read"
    And the response field "delivered_at" is the remembered "first delivery"
    When I send "GET /agent/messages/{recipient}?unread=true"
    Then the response is a list of 0 items

  @creates-runs
  Scenario: A recipient that has finished refuses the message
    Given I create a run with the prompt "Migrate the schema"
    And I remember the run as "sender"
    And I create a run with the prompt "Update the API"
    And I remember the run as "recipient"
    And I cancel the run, retrying while the server answers a retryable 409
    When I send "POST /agent/messages" with the body {"to": ["{recipient}"], "subject": "Too late", "body": "You have stopped.", "sender_run_id": "{sender}"}
    Then the response is a problem with status 422 and code "operation_not_supported"
