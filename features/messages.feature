Feature: Run-to-run messages
  Runs that work together send each other messages. Each recipient gets its
  own copy; its inbox lists the headers; reading one returns the body. The
  times a copy was delivered and read are set once and never change.

  The published document keeps sending for the service's own agents, behind
  a feature flag, and documents no errors for it: a real service may refuse
  a user's key there, or have messaging switched off. So a scenario whose
  message is refused is skipped, saying so, on any server but the mock
  (which the suite knows by its control API); a recipient that has already
  ended when the message comes leaves its scenario inconclusive. A server
  that took a message for a recipient while it ran must refuse one once
  the recipient has ended, with some 4xx; which one (422
  operation_not_supported) is the mock's promise (tagged mock-only).
  Reading an inbox needs a key on any server.

  Scenario: Messages need credentials
    When I send "GET /agent/messages/{unknown}" with no Authorization header
    Then the response is a problem with status 401 and code "authentication_required"

  @creates-runs
  Scenario: A message reaches the recipient's inbox unread
    Given I created these runs:
      | run       |
      | sender    |
      | recipient |
    When run "sender" sends run "recipient" the message "Schema changed" saying "Rebase first."
    Then the message is accepted, with an id for its recipient
    And the inbox of run "recipient" holds the message "Schema changed", neither delivered nor read
    And the inbox of run "sender" is empty

  @creates-runs
  Scenario: Delivery and reading are recorded once
    Given I created these runs:
      | run       |
      | sender    |
      | recipient |
    And run "sender" has sent run "recipient" the message "Schema changed" saying "Rebase first."
    When the recipient marks the message delivered
    And the recipient reads the message
    Then the message reads "Rebase first.", with the times it was delivered and read
    When 2 poll intervals pass
    And the recipient marks the message delivered again
    And the recipient reads the message again
    Then the times it was delivered and read are still those of the first reading
    And run "recipient" has no unread messages

  # A cancel may take effect a moment after the server accepts it, so the
  # suite waits, with its usual patience, for the recipient to have ended.
  # The first message shows that the server takes messages for the
  # recipient; a server that does not skips the scenario, saying so.
  @creates-runs
  Scenario: A recipient that took messages while it ran refuses them once it has ended
    Given I created these runs:
      | run       |
      | sender    |
      | recipient |
    And run "sender" has sent run "recipient" the message "Schema changed" saying "Rebase first."
    And run "recipient" has ended, cancelled unless it ended first
    When run "sender" sends run "recipient" the message "Too late" saying "You have stopped."
    Then the message is refused with a 4xx, the recipient having ended

  @creates-runs @mock-only
  Scenario: A recipient that has finished refuses the message
    Given I created these runs:
      | run       |
      | sender    |
      | recipient |
    And run "recipient" has ended, cancelled unless it ended first
    When run "sender" sends run "recipient" the message "Too late" saying "You have stopped."
    Then the response is a problem with status 422 and code "operation_not_supported"
