//! The bench input (shared by `benches/support.rs`, `bench/src/bin/golden.rs` and
//! `bench/src/bin/profile.rs`): 5 handbook passages of about 1 KB and a 3-sentence answer.

#![allow(dead_code)]

use groundcite_verify::Claim;

/// The question the answer responds to.
pub const QUESTION: Option<&str> = Some("How many hours should I bill in a normal week?");

/// The passages sent, in order: `[k]` cites `PASSAGES[k - 1]`.
pub const PASSAGES: [&str; 5] = [
    r#"## 18F billable hour expectations

If you’re an individual contributor or a lead, you’re expected to spend at least
80% of your time on billable project work. That leaves up to 20% of your time to
be spent on non-billable work. So for most people in a given 40-hour week, the
expectation is to bill at least 32 hours to project work. But what about
holidays or leave time? Then you’ll need to spend 80% of the time you’re working
that week on billable work. Here’s what that looks like if you’re out of the
office for a few days:

| Work week | Billable time (minimum hours expected) | Non-billable time (not to exceed) |
| --------- | -------------------------------------- | --------------------------------- |
| 5 days    | 32 hours (80% of 40 hours)             | 8 hours                           |
| 4 days    | 25.5 hours (80% of 32 hours)           | 6.5 hours                         |
| 3 days    | 19 hours (80% of 24 hours)             | 5 hours                           |
| 2 days    | 13 hours (80% of 16 hours)             | 3 hours                           |"#,
    r#"**Pay period**: every full-time employee in TTS works 80 hours in a two week pay period. Pay period start/end dates can be found on [GSA’s payroll calendars page](https://www.gsa.gov/buy-through-us/purchasing-programs/shared-services/payroll-shared-services/payroll-calendars).

## Schedule types and their relationship to overtime, holiday pay, and credit hours

### Standard schedule 
You are scheduled to arrive and depart at the same time, every day that you work. The start/stop times do not change from one pay period to the next. You work 8 hours every day, for all 10 work days per pay period. By default, new TTS employees are on a standard schedule.
- [Overtime and comp time]({% page "/travel-and-leave/overtime/" %}): Yes - Can be approved for working more than 8 hours in a day.
- Holiday pay: Yes - You receive 8 hours of holiday pay for the time you were scheduled to work.
- [Credit hours]({% page "/travel-and-leave/overtime/" %}): No - Not available with this schedule

### Compressed schedule"#,
    r#"## Eligibility

All GSA employees who take mass/public transit to work are eligible for transit
subsidies. To receive a transit subsidy, you need to enroll using the process
below.

## Enrolling in transit benefit

The step-by-step guidance below is specific to TTS employees:

Use `T-TECH TRANSFORMATION SERVICE` as your organizational code. Make sure to
select the **Transit Coordinator in the Region in which you reside** - this
information is listed in the online form.

- Go to
  [https://transitapp.ost.dot.gov/](https://transitapp.ost.dot.gov/)
- Click on **Register**
- Update your password information using the temporary password that's emailed
  to you
- Login using your government email and updated password
- Review the "Rules of behavior" and then click on **I Agree**
- Click on **Transit Benefit Application**
- Select "Certify/Enroll" and click **Continue**
- On the "Warning" screen, click **I Agree**
- Enter information into the application and verify that it's correct. _Here are
  common selections for TTS team members:_"#,
    r#"## Getting issued a card

Your PIV allows you to get in and out of GSA buildings and avoid security lines.

Although some of our employees are based out of a specific office, your badge
can be permissioned for multiple GSA buildings. Email
[hspd12.security@gsa.gov](mailto:hspd12.security@gsa.gov) to start this process,
which usually takes a few days. After you receive an email confirmation, you'll
need to visit the security office in each new building to activate your card.

GSA processes new badges every Wednesday. When your badge is ready, you’ll
receive an email (in both your personal and GSA emails) from
`HSPD12Admin@usaccess.gsa.gov` containing four steps. Please skip to step four,
which details how to schedule an appointment and pick up your badge, and bring
the password in step three. To check on the status of your GSA badge, you can
email [hspd12.security@gsa.gov](mailto:hspd12.security@gsa.gov).

## Use with a GSA Mac

### Setup

Once you have your PIV card and PIN, you should be able to set up your computer"#,
    r#"### Don't forget about vouchers!

Have a good trip, [get
reimbursement]({% page "/travel-and-leave/travel-and-leave-policies/travel-guide-4-reimbursement/" %})--
filling out a voucher-- within 5 business days of getting back.

Why the rush? Filling out a voucher correctly allows you to:

1. Get reimbursed for your M&IE and for any hotels, airplane tickets, or other
   expenses you paid for personally.

2. Have the government automatically pay off the balance on your Travel Card. If
   you do your voucher correctly and on time, you will never have to worry about
   paying one of those bills yourself.

On the other side, when travel expenses are submitted late, it’s a major drain
on resources for the finance and agreements teams, which sometimes have to
reopen billing and even modify agreements in order to recover our costs for the
trip, which the Economy Act requires us to do. So, **future travel may not be
approved for anyone with travel expenses that are more than 5 business days
outstanding.**

[Back from your trip? Head on over to get"#,
];

/// The answer's three sentences, each with the passages it cites.
pub const CLAIMS: [Claim<'static>; 3] = [
    Claim {
        text: "In a 40-hour week you are expected to bill at least 32 hours to project work [1].",
        cited: &[1],
    },
    Claim {
        text: "Every full-time TTS employee works 80 hours in a three week pay period [2].",
        cited: &[2],
    },
    Claim {
        text: "GSA processes new badges every Friday [4][5].",
        cited: &[4, 5],
    },
];
