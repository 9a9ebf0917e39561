@mock-control
Feature: The mock's control API
  Not part of the API's behaviour: these scenarios describe the bundled
  mock's control API (under /__mock/), which tests use to put runs into
  states a real server reaches only by itself. They run only against the
  mock.

  @creates-runs
  Scenario: A state the mock puts a run into holds
    When I create a run with the prompt "Regenerate the API client"
    And the mock puts the run into "INPROGRESS"
    And the mock puts the run into "ERROR" with error code "internal_error"
    And I fetch the run
    Then the run is in state "ERROR"
    And the run has a status message with error code "internal_error"
    And the run's "started_at" is a timestamp
    When an hour passes on the mock's clock
    And I fetch the run
    Then the run is in state "ERROR"
