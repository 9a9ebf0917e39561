Feature: Agent identities
  A team has agents that its team-owned runs can act as. People on the team
  list, create, rename and delete them; the team's default agent stays; a
  plan allows only so many. Deleting an agent deletes its API keys with it.

  Scenario: The team's agents are listed
    When I send "GET /agent/identities"
    Then the response status is 200

  Scenario: Agents need credentials
    When I send "GET /agent/identities" with no Authorization header
    Then the response is a problem with status 401 and code "authentication_required"

  @mock-only
  Scenario: A team agent is created, renamed and deleted
    When I send "POST /agent/identities" with the body {"name": "Docs bot {label}"}
    Then the response status is 201
    And the response field "name" is "Docs bot {label}"
    And the response field "available" is "true"
    And I remember the response field "uid" as "agent"
    And the listing of agents holds the remembered "agent"
    When I send "PUT /agent/identities/{agent}" with the body {"name": "Changelog bot"}
    Then the response status is 200
    And the response field "name" is "Changelog bot"
    And the response field "uid" is the remembered "agent"
    When I send "DELETE /agent/identities/{agent}"
    Then the response status is 204
    And the listing of agents does not hold the remembered "agent"
    When I send "DELETE /agent/identities/{agent}"
    Then the response is a problem with status 404 and code "resource_not_found"

  @mock-only
  Scenario: An agent needs a name
    When I send "POST /agent/identities" with the body {"name": "   "}
    Then the response is a problem with status 400 and code "invalid_request"

  @mock-only
  Scenario: The team's default agent cannot be deleted
    When I send "GET /agent/identities"
    And I remember the response field "agents.0.uid" as "default"
    And I send "DELETE /agent/identities/{default}"
    Then the response is a problem with status 400 and code "invalid_request"

  @mock-only
  Scenario: A plan allows only so many agents
    When I send "POST /agent/identities" with the body {"name": "One"}
    And I send "POST /agent/identities" with the body {"name": "Two"}
    And I send "POST /agent/identities" with the body {"name": "Three"}
    Then the response is a problem with status 403 and code "not_authorized"

  # Without "team", a caller on one team starts a team-owned run.
  @mock-only @creates-runs
  Scenario: A team-owned run acting as an agent is created by it
    When I send "POST /agent/identities" with the body {"name": "Release bot {label}"}
    And I remember the response field "uid" as "agent"
    And I create a run with:
      | prompt             | Tag the release |
      | agent_identity_uid | {agent}         |
    And I fetch the run
    Then the run's "creator.display_name" is "Release bot {label}"

  @mock-only @creates-runs
  Scenario: A run cannot act as an agent that does not exist
    When I send "POST /agent/run" with the body {"prompt": "x", "team": true, "agent_identity_uid": "agent-{unknown}"}
    Then the response is a problem with status 400 and code "invalid_request"

  @mock-only @mock-control
  Scenario: Deleting an agent revokes its API keys at once
    When I send "POST /agent/identities" with the body {"name": "Short-lived {label}"}
    And I remember the response field "uid" as "agent"
    And the mock issues an API key for the remembered agent "agent"
    And I send "GET /agent/runs" with the agent's API key
    Then the response status is 200
    When I send "DELETE /agent/identities/{agent}"
    And I send "GET /agent/runs" with the agent's API key
    Then the response is a problem with status 401 and code "authentication_required"
