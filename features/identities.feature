Feature: Agent identities
  A team has agent identities that its team-owned runs act as. People on
  the team list, create, rename and delete them; the team's default
  identity stays; a plan allows only so many. Deleting an identity deletes
  its API keys with it. (The agents (skills) a run can take, GET /agent,
  is another thing: see agents.feature.)

  The published document does not say which identities a team starts with
  nor how many its plan allows, so the scenarios that depend on those are
  what the bundled mock promises, tagged @mock-only: in its fixtures Alice's
  team has a default identity and one other, and a plan of three. Creating,
  renaming and deleting one identity is the document's on any server; one
  that refuses the create (403: a full plan, or a key that may not manage
  identities) leaves that scenario skipped, saying so.

  Scenario: The team's identities are listed
    When I list the team's identities
    Then the team's identities are listed

  Scenario: Identities need credentials
    When I send "GET /agent/identities" with no Authorization header
    Then the response is a problem with status 401 and code "authentication_required"

  @writes
  Scenario: An identity is created, renamed and deleted
    When I create an identity named "Docs bot {label}"
    Then the identity is created, available, with the name "Docs bot {label}"
    And the team's identities include it
    When I rename the identity "Changelog bot"
    Then the identity is now named "Changelog bot"
    When I delete the identity
    Then the identity is deleted
    And the team's identities no longer include it
    When I delete the identity
    Then the response is a problem with status 404 and code "resource_not_found"

  @mock-only @writes
  Scenario: An identity needs a name
    When I create an identity named "   "
    Then the response is a problem with status 400 and code "invalid_request"

  @mock-only @writes
  Scenario: The team's default identity cannot be deleted
    When I delete the team's default identity
    Then the response is a problem with status 400 and code "invalid_request"

  # Two of the plan's three are taken: one more fits, the next does not.
  @mock-only @writes
  Scenario: A plan allows only so many identities
    When I create an identity named "Third {label}"
    Then the identity is created, available, with the name "Third {label}"
    When I create an identity named "Fourth {label}"
    Then the response is a problem with status 403 and code "not_authorized"

  # The same edge on any server whose plan the operator knows: given the
  # number (--identity-plan; the mock's is 3), the suite creates identities
  # until the team has that many, each accepted, and the next is refused.
  # It assumes nothing else changes the team's identities meanwhile: the
  # suite's own scenarios wait while this one runs, other clients of the
  # team must. A team already at its plan leaves it inconclusive. The
  # identities it created are deleted again, and must be gone: a delete that
  # answered 204 but left them would fill the team's plan for every scenario
  # after it.
  @plan-edge @writes
  Scenario: A plan allows exactly as many identities as it says
    When I create agent identities until the team has as many as its plan allows
    Then creating one more identity is refused with 403
    When I delete the identities made to fill the plan
    Then the team's identities no longer include them

  # Without "team", a caller on one team starts a team-owned run.
  @mock-only @creates-runs
  Scenario: A team-owned run acting as an identity is created by it
    When I create an identity named "Release bot {label}"
    And I create a team-owned run acting as the identity, with the prompt "Tag the release"
    Then the run was created by the identity

  @mock-only @creates-runs
  Scenario: A run cannot act as an identity that does not exist
    When I create a team-owned run acting as an identity that does not exist
    Then the response is a problem with status 400 and code "invalid_request"

  @mock-only @mock-control @writes
  Scenario: Deleting an identity revokes its API keys at once
    When I create an identity named "Short-lived {label}"
    And the mock issues an API key for the identity
    Then the identity's API key reads the team's runs
    When I delete the identity
    Then the identity's API key no longer reads the team's runs

  # What the newest official client (oz-agent-sdk 1.4.0-alpha.6) reads of
  # an identity, beyond the published document (May 2026): one identity by
  # its uid, with every field the client needs. The suite judges
  # these where the server serves that surface, or --newest-client promises it.

  @newest-client
  Scenario: An agent identity is fetched by its uid with every field the client needs
    When I send "GET /agent/identities"
    And I remember the response field "agents.0.uid" as "agent"
    And I send "GET /agent/identities/{agent}"
    Then the response status is 200
    And the response field "uid" is "{agent}"
    And the answer has the identity fields the newest client needs

  @newest-client
  Scenario: An agent identity that does not exist is a 404
    When I send "GET /agent/identities/agent-{unknown}"
    Then the response is a problem with status 404 and code "resource_not_found"

  @mock-only @writes @newest-client
  Scenario: An agent's settings are kept and given back
    When I send "POST /agent/identities" with the body {"name": "Reviewer {label}", "agent_type": "REVIEW", "description": "Reviews pull requests", "skills": ["acme/api:review"], "secrets": [{"name": "GH_TOKEN"}], "harness": {"type": "codex", "reasoning_level": "high"}}
    Then the response status is 201
    And I remember the response field "uid" as "agent"
    When I send "GET /agent/identities/{agent}"
    Then the response field "agent_type" is "REVIEW"
    And the response field "skills.0" is "acme/api:review"
    And the response field "secrets.0.name" is "GH_TOKEN"
    And the response field "harness.type" is "codex"
    And the answer has the identity fields the newest client needs
    When I send "PUT /agent/identities/{agent}" with the body {"description": null, "skills": null}
    And I send "GET /agent/identities/{agent}"
    Then the response has no field "description"
    And the response field "skills" is "[]"
