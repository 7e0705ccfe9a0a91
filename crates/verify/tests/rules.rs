//! One test per rule, with real phrasings from the TTS handbook corpus.

use groundcite_verify::{Claim, Judgement, LexicalVerifier, Reason, Verdict, Verifier};

fn judge_q(question: Option<&str>, passages: &[&str], claim: &str, cited: &[usize]) -> Judgement {
    LexicalVerifier::default()
        .verify(question, passages, &[Claim { text: claim, cited }])
        .remove(0)
}

fn judge(passage: &str, claim: &str) -> Judgement {
    judge_q(None, &[passage], claim, &[1])
}

fn reasons(j: &Judgement) -> Vec<String> {
    j.reasons.iter().map(|r| r.to_string()).collect()
}

const VOUCHER: &str = "Have a good trip, [get reimbursement](/travel/) -- filling out a voucher -- within 5 business days of getting back.";
const BILLABLE: &str = "If you’re an individual contributor or a lead, you’re expected to spend at least\n80% of your time on billable project work. That leaves up to 20% of your time to\nbe spent on non-billable work.";
const PAY_PERIOD: &str =
    "**Pay period**: every full-time employee in TTS works 80 hours in a two week pay period.";
const ACCRUAL: &str = "* Less than 3 years: 4 hours per pay period\n* Between 3 and 15 years: 6 hours per pay period\n* More than 15 years: 8 hours per pay period";
const MIE: &str = "The M&IE rate is $69 per day in DC, and is 75% of $69 ($51.75) on the first and last days of a trip.";
const AWARD: &str = "Award leave expires one year after it is issued. Expired award leave cannot be recovered. If you leave TTS, award leave is not paid out.";
const FMLA: &str = "FMLA entitles you to take up to 12 weeks of *unpaid* leave per 12 month period for the following:";
const CREDIT: &str = "* Credit hours cannot be converted to cash, unless you leave GSA (then they will be paid out).";
const LWOP: &str = "* To request over 80 hours of LWOP, you must get written approval from your immediate supervisor and Business Unit Director.";
const EQUIPMENT: &str = "GSA issues every TTS employee a badge, laptop, and phone. Your laptop should be ready before your first day, but your phone may not be.";
const BADGES: &str = "Email the security office to start this process, which usually takes a few days. GSA processes new badges every Wednesday.";
const TICKETING: &str =
    "\"Ticketing\" usually occurs approximately 48-72 hours before departure in the reservation.";

#[test]
fn business_days_differ() {
    let j = judge(
        VOUCHER,
        "File your voucher within 15 business days of getting back [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted);
    assert_eq!(
        reasons(&j),
        [r#"number_mismatch: "15 business days" vs "5 business days""#]
    );
    assert_eq!(
        judge(
            VOUCHER,
            "File your voucher within 5 business days of getting back [1]."
        )
        .verdict,
        Verdict::Supported
    );
}

#[test]
fn percentages_with_bounds() {
    assert_eq!(
        judge(
            BILLABLE,
            "You are expected to spend at least 80% of your time on billable project work [1]."
        )
        .verdict,
        Verdict::Supported
    );
    let j = judge(
        BILLABLE,
        "You are expected to spend at least 70% of your time on billable project work [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted);
    let j = judge(
        BILLABLE,
        "You are expected to spend at most 80% of your time on billable project work [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted);
    assert!(
        matches!(j.reasons[0], Reason::BoundMismatch { .. }),
        "{:?}",
        j.reasons
    );
}

#[test]
fn word_numbers() {
    assert_eq!(
        judge(
            PAY_PERIOD,
            "Every full-time TTS employee works 80 hours in a two week pay period [1]."
        )
        .verdict,
        Verdict::Supported
    );
    let j = judge(
        PAY_PERIOD,
        "Every full-time TTS employee works 80 hours in a three week pay period [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted);
    assert_eq!(
        reasons(&j),
        [r#"number_mismatch: "three week" vs "two week""#]
    );
    // Units convert: two weeks are fourteen days.
    assert_eq!(
        judge(
            PAY_PERIOD,
            "Full-time employees in TTS work 80 hours in a 14 day pay period [1]."
        )
        .verdict,
        Verdict::Supported
    );
}

#[test]
fn ranges() {
    assert_eq!(
        judge(
            ACCRUAL,
            "Between 3 and 15 years, you get 6 hours per pay period [1]."
        )
        .verdict,
        Verdict::Supported
    );
    assert_eq!(
        judge(
            ACCRUAL,
            "Between 3 and 15 years, you get 7 hours per pay period [1]."
        )
        .verdict,
        Verdict::Contradicted
    );
    assert_eq!(
        judge(
            TICKETING,
            "Ticketing usually occurs 48–72 hours before departure [1]."
        )
        .verdict,
        Verdict::Supported
    );
    assert_eq!(
        judge(
            TICKETING,
            "Ticketing usually occurs 24 to 48 hours before departure [1]."
        )
        .verdict,
        Verdict::Contradicted
    );
}

#[test]
fn money() {
    assert_eq!(
        judge(
            MIE,
            "On the first and last days of a trip the M&IE rate is $51.75 [1]."
        )
        .verdict,
        Verdict::Supported
    );
    let j = judge(
        MIE,
        "On the first and last days of a trip the M&IE rate is $55.75 [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted);
    assert!(
        reasons(&j)[0].starts_with(r#"number_mismatch: "$55.75" vs "#),
        "{:?}",
        reasons(&j)
    );
}

#[test]
fn durations_in_words() {
    assert_eq!(
        judge(AWARD, "Award leave expires a year after it is issued [1].").verdict,
        Verdict::Supported
    );
    assert_eq!(
        judge(
            AWARD,
            "Award leave expires two years after it is issued [1]."
        )
        .verdict,
        Verdict::Contradicted
    );
}

#[test]
fn negation_and_opposite_polarity() {
    let j = judge(AWARD, "If you leave TTS, award leave is paid out [1].");
    assert_eq!(
        (j.verdict, reasons(&j)),
        (Verdict::Contradicted, vec!["negation".to_owned()])
    );
    assert_eq!(
        judge(AWARD, "If you leave TTS, award leave is not paid out [1].").verdict,
        Verdict::Supported
    );
    assert_eq!(
        judge(
            FMLA,
            "FMLA entitles you to up to 12 weeks of paid leave per 12 month period [1]."
        )
        .verdict,
        Verdict::Contradicted
    );
    assert_eq!(
        judge(
            FMLA,
            "FMLA entitles you to up to 12 weeks of unpaid leave per 12 month period [1]."
        )
        .verdict,
        Verdict::Supported
    );
    assert_eq!(
        judge(CREDIT, "Credit hours can be converted to cash [1].").verdict,
        Verdict::Contradicted
    );
    assert_eq!(
        judge(CREDIT, "Credit hours cannot be converted to cash [1].").verdict,
        Verdict::Supported
    );
}

#[test]
fn exclusive_restriction() {
    let j = judge(
        LWOP,
        "To request over 80 hours of LWOP, you only need written approval from your immediate supervisor [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted);
    assert!(reasons(&j).contains(&r#"restriction: "only""#.to_owned()));
}

#[test]
fn another_entity_in_the_same_slot() {
    let j = judge(
        EQUIPMENT,
        "GSA issues every TTS employee a badge, laptop, and tablet [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted);
    assert_eq!(reasons(&j)[0], r#"entity_mismatch: "tablet" vs "phone""#);
    let ev = j.evidence.unwrap();
    assert_eq!(
        &EQUIPMENT[ev.start..ev.end],
        "GSA issues every TTS employee a badge, laptop, and phone."
    );
    // Not the same slot: "view content" is not coordinated, "Conversations and content" is.
    let j = judge(
        "Conversations and content in public channels are searchable and viewable by anyone in TTS Slack.",
        "Anyone in TTS Slack can search and view content in public channels [1].",
    );
    assert!(
        !reasons(&j).iter().any(|r| r.starts_with("entity_mismatch")),
        "{:?}",
        j.reasons
    );
    assert_ne!(j.verdict, Verdict::Contradicted);
}

#[test]
fn weekdays() {
    let j = judge(BADGES, "GSA processes new badges every Friday [1].");
    assert_eq!(j.verdict, Verdict::Contradicted);
    assert_eq!(reasons(&j), [r#"date_mismatch: "Friday" vs "Wednesday""#]);
    assert_eq!(
        judge(BADGES, "GSA processes new badges every Wednesday [1].").verdict,
        Verdict::Supported
    );
}

#[test]
fn missing_terms_are_unsupported() {
    let j = judge(EQUIPMENT, "Most new hires now receive a Chromebook [1].");
    assert_eq!(j.verdict, Verdict::Unsupported);
    assert!(
        reasons(&j).iter().any(|r| r.contains("Chromebook")),
        "{:?}",
        reasons(&j)
    );
    // A quantity the passage does not state at all is missing, not contradicted.
    let j = judge(
        EQUIPMENT,
        "GSA issues every TTS employee a badge, laptop, and phone within 30 days [1].",
    );
    assert_eq!(j.verdict, Verdict::Unsupported);
}

#[test]
fn paraphrase_glue_is_not_a_false_alarm() {
    let p = "Your supervisor will determine if you need a MacBook Pro or PC laptop.";
    assert_eq!(
        judge(
            p,
            "Your supervisor decides whether you get a MacBook Pro or a PC [1]."
        )
        .verdict,
        Verdict::Supported
    );
    let p = "So for most people in a given 40-hour week, the expectation is to bill at least 32 hours to project work.";
    assert_eq!(
        judge(
            p,
            "In a 40-hour week you are expected to bill at least 32 hours to project work [1]."
        )
        .verdict,
        Verdict::Supported
    );
}

#[test]
fn rule_4_suggests_the_uncited_passage() {
    let passages = [EQUIPMENT, VOUCHER];
    let j = judge_q(
        None,
        &passages,
        "File your voucher within 5 business days of getting back [1].",
        &[1],
    );
    assert_eq!(j.verdict, Verdict::Unsupported);
    assert_eq!(j.suggested, [2]);
    assert!(j.reasons.contains(&Reason::UncitedSupport(vec![2])));
    // Uncited sentence: judged against all passages, the supporting one suggested.
    let j = judge_q(
        None,
        &passages,
        "File your voucher within 5 business days of getting back.",
        &[],
    );
    assert_eq!(
        (j.verdict, j.suggested.clone()),
        (Verdict::Supported, vec![2])
    );
}

#[test]
fn idle_citations() {
    let passages = [VOUCHER, BADGES];
    let j = judge_q(
        None,
        &passages,
        "File your voucher within 5 business days of getting back [1][2].",
        &[1, 2],
    );
    assert_eq!(j.verdict, Verdict::Supported);
    assert_eq!(j.idle_citations, [2]);
}

#[test]
fn elliptic_answers_use_the_question() {
    let q = Some("When are new badges processed?");
    assert_eq!(
        judge_q(q, &[BADGES], "Every Wednesday [1].", &[1]).verdict,
        Verdict::Supported
    );
    assert_eq!(
        judge_q(q, &[BADGES], "Every Friday [1].", &[1]).verdict,
        Verdict::Contradicted
    );
    let q = Some("How long can I take unpaid FMLA leave?");
    assert_eq!(
        judge_q(q, &[FMLA], "Up to 12 weeks [1].", &[1]).verdict,
        Verdict::Supported
    );
    assert_eq!(
        judge_q(q, &[FMLA], "Yes, up to 16 weeks [1].", &[1]).verdict,
        Verdict::Contradicted
    );
}

#[test]
fn bullets_and_markers_are_not_content() {
    assert_eq!(
        judge(
            VOUCHER,
            "- File your voucher within 5 business days of getting back [1, 2]."
        )
        .verdict,
        Verdict::Supported
    );
    assert_eq!(
        judge(
            VOUCHER,
            "1. File your voucher within 5 business days of getting back [1-2]."
        )
        .verdict,
        Verdict::Supported
    );
}

#[test]
fn judgement_serialises_with_reason_strings() {
    let j = judge(
        VOUCHER,
        "File your voucher within 15 business days of getting back [1].",
    );
    let v = serde_json::to_value(&j).unwrap();
    assert_eq!(v["verdict"], "contradicted");
    assert_eq!(
        v["reasons"][0],
        r#"number_mismatch: "15 business days" vs "5 business days""#
    );
    assert_eq!(v["evidence"]["passage"], 1);
    let cfg: groundcite_verify::SupportConfig =
        serde_json::from_str(r#"{"missing_weight_threshold": 2.0}"#).unwrap();
    assert_eq!(cfg.max_window_sentences, 3);
}

#[test]
fn paraphrases_of_handbook_sentences_stay_supported() {
    let detail = "**Please note**: it can take 4-6 weeks to process a detail, if an interagency agreement (IAA) is needed.";
    assert_eq!(
        judge(
            detail,
            "If an IAA is required, processing takes four to six weeks [1]."
        )
        .verdict,
        Verdict::Supported
    );
    let carry =
        "You can carry over a maximum of 240 annual leave hours, from one leave year to the next.";
    assert_eq!(
        judge(
            carry,
            "You can carry over up to 240 hours of annual leave into the next leave year [1]."
        )
        .verdict,
        Verdict::Supported
    );
    let extend = "Details last for 120 days. The detail can be extended for another 120 days (240\ndays total), provided that:\n\n- The detailee, detailee supervisor, TTS supervisor, and Business Unit Director agree.";
    let q = Some("How long can a detail last?");
    let j = judge_q(
        q,
        &[extend],
        "An extension requires the agreement of the detailee, both supervisors, and the Business Unit Director [1].",
        &[1],
    );
    assert_eq!(j.verdict, Verdict::Supported, "{:?}", reasons(&j));
    let award = "Award leave is offered for End of Year Performance Awards and Special Act Awards.";
    assert_eq!(
        judge(
            award,
            "Award leave is granted for End of Year Performance Awards and Special Act Awards [1]."
        )
        .verdict,
        Verdict::Supported
    );
    // A capitalised "Never" inside a name is not a negation.
    let bands = "They were one of the three bands featured on the cover page, along with Never Shout Never and Hey Monday.";
    assert_eq!(
        judge(
            bands,
            "Hey Monday was featured on the cover page along with them [1]."
        )
        .verdict,
        Verdict::Supported
    );
}

#[test]
fn another_agent_for_the_same_action() {
    let j = judge(
        EQUIPMENT,
        "TTS issues every employee a badge, laptop, and phone [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted);
    assert_eq!(reasons(&j)[0], r#"entity_mismatch: "TTS" vs "GSA""#);
    let p = "Beowulf is a 2007 film directed by Robert Zemeckis and written by Neil Gaiman and Roger Avary.";
    let j = judge(p, "Neil Gaiman directed Beowulf [1].");
    assert_eq!(j.verdict, Verdict::Contradicted);
    assert_eq!(
        reasons(&j)[0],
        r#"entity_mismatch: "Neil Gaiman" vs "Robert Zemeckis""#
    );
    assert_eq!(
        judge(p, "Robert Zemeckis directed Beowulf [1].").verdict,
        Verdict::Supported
    );
    assert_eq!(
        judge(p, "Neil Gaiman wrote Beowulf with Roger Avary [1].").verdict,
        Verdict::Supported
    );
}

#[test]
fn table_rows_below_their_header() {
    let table = "| Work week | Billable time (minimum hours expected) | Non-billable time (not to exceed) |\n| --------- | -------------------------------------- | --------------------------------- |\n| 5 days    | 32 hours (80% of 40 hours)             | 8 hours                           |\n| 4 days    | 25.5 hours (80% of 32 hours)           | 6.5 hours                         |";
    let j = judge(
        table,
        "In a 4-day week the minimum billable time is 28 hours [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted);
    // "not to exceed" is a bound, not a negation.
    assert_eq!(
        reasons(&j),
        [r#"number_mismatch: "28 hours" vs "25.5 hours""#]
    );
    assert_eq!(
        judge(
            table,
            "In a 4-day week the minimum billable time is 25.5 hours [1]."
        )
        .verdict,
        Verdict::Supported
    );
}

/// The same span written another way is the same quantity; business days are not
/// calendar days.
#[test]
fn equivalent_number_forms_and_day_kinds() {
    const PROMOTION: &str = "For all Merit Promotion roles: employees must be at their current GS level for\none year in order to apply for a position at the next highest GS level.";
    assert_eq!(
        judge(
            PROMOTION,
            "For Merit Promotion roles, you must have been at your current GS level for twelve months before you can apply for the next highest GS level [1]."
        )
        .verdict,
        Verdict::Supported
    );
    let j = judge(
        VOUCHER,
        "File your voucher within 5 calendar days of getting back [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted);
    assert_eq!(
        reasons(&j),
        [r#"number_mismatch: "5 calendar days" vs "5 business days""#]
    );
}

/// "aren't" is a negation cue, not a missing word, and a merged claim takes its
/// negation from whichever window sentence states it.
#[test]
fn contractions_and_merged_negations() {
    const INTERNAL: &str = "Internal hiring actions are not posted to USAJobs. These hiring actions include reassignments, details, and temporary promotions.";
    let j = judge(
        INTERNAL,
        "Internal hiring actions, such as reassignments, details, and temporary promotions, aren't posted to USAJobs [1].",
    );
    assert_eq!(j.verdict, Verdict::Supported, "{:?}", j.reasons);
    let j = judge(
        INTERNAL,
        "Internal hiring actions are posted to USAJobs [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted);
}

/// A list item is read with its lead-in, a table row with its header.
#[test]
fn list_items_keep_their_lead_in() {
    const RELIC: &str = "New Relic includes several products, each of which is available to TTS systems:\n\n- **APM:** application performance monitoring\n- **Infrastructure:** host- and operating system-level monitoring\n- **Synthetics:** availability monitoring";
    let j = judge(
        RELIC,
        "APM, the application performance monitoring product, is available to TTS systems [1].",
    );
    assert_eq!(j.verdict, Verdict::Supported, "{:?}", j.reasons);
    const TABLE: &str = "| Tool | Purpose |\n|---|---|\n| Tock | time tracking |\n| Slack | chat |";
    let j = judge(TABLE, "The purpose of Tock is time tracking [1].");
    assert_eq!(j.verdict, Verdict::Supported, "{:?}", j.reasons);
}

/// A claim that names one list item or table row but states what another says is
/// contradicted, with both labels; a claim that keeps each property with its item stays
/// supported.
#[test]
fn a_property_of_another_list_item_or_row_is_contradicted() {
    const RELIC: &str = "New Relic includes several products, each of which is available to TTS systems:\n\n- **Infrastructure:** host- and operating system-level monitoring\n- **Logs:** log management, monitoring, and alerting\n- **Synthetics:** endpoint uptime and availability monitoring";
    let j = judge(
        RELIC,
        "Among the New Relic products, Synthetics handles log management and alerting [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted, "{:?}", j.reasons);
    assert_eq!(reasons(&j), [r#"list_mixup: "Synthetics" vs "Logs""#]);
    for supported in [
        "Among the New Relic products, Logs handles log management and alerting [1].",
        "Synthetics monitors endpoint uptime and availability [1].",
        "Logs handles log management, while Synthetics monitors endpoint uptime [1].",
        "Every New Relic product, Synthetics included, is available to TTS systems [1].",
    ] {
        let j = judge(RELIC, supported);
        assert_eq!(
            j.verdict,
            Verdict::Supported,
            "{supported}: {:?}",
            j.reasons
        );
    }
    const TOOLS: &str = "| Tool | Purpose |\n|---|---|\n| Tock | time tracking |\n| Slack | chat |\n| Zoom | video meetings |";
    let j = judge(TOOLS, "Slack is the tool for time tracking [1].");
    assert_eq!(j.verdict, Verdict::Contradicted, "{:?}", j.reasons);
    assert_eq!(reasons(&j), [r#"list_mixup: "Slack" vs "Tock""#]);
    let j = judge(TOOLS, "Tock is the tool for time tracking [1].");
    assert_eq!(j.verdict, Verdict::Supported, "{:?}", j.reasons);
}

/// "not ... until" and "only if" state a necessary condition; a passage that states
/// the requirement ("must ... before", "needs to be") says the same. Without a requirement in
/// the passage they stay a negation and a restriction.
#[test]
fn a_necessary_condition_is_not_a_negation_or_a_restriction() {
    const SIGNERS: &str = "Before git will accept your key to sign a commit, the key must be listed in an\n\"approved signers\" list.";
    let j = judge(
        SIGNERS,
        "Git won't accept your key for signing a commit until it's listed in an approved signers list [1].",
    );
    assert_eq!(j.verdict, Verdict::Supported, "{:?}", j.reasons);
    let j = judge(
        "Git will accept your key to sign a commit, and the key is then listed in an approved signers list.",
        "Git won't accept your key for signing a commit until it's listed in an approved signers list [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted, "{:?}", j.reasons);
    assert_eq!(reasons(&j), ["negation"]);
    let j = judge(
        SIGNERS,
        "Git won't accept your key for signing a commit [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted, "{:?}", j.reasons);

    const BOARD: &str = "To be able to see a board, either the board needs to be public or people need to be added to the board explicitly.";
    let j = judge(
        BOARD,
        "You can see a board only if it's public or you've been added to it explicitly [1].",
    );
    assert_eq!(j.verdict, Verdict::Supported, "{:?}", j.reasons);
    let j = judge(
        "Anyone can see a board that is public, and people can be added to the board explicitly.",
        "You can see a board only if it's public [1].",
    );
    assert_eq!(reasons(&j), [r#"restriction: "only""#]);
}

/// "only" before an amount stresses the amount; it restricts nothing.
#[test]
fn only_before_an_amount_is_not_a_restriction() {
    const MEMBERS: &str = "We are limited in the number of Workspace Members we can add. You will be added as a Workspace Guest.";
    let j = judge(
        MEMBERS,
        "We can add only a limited number of Workspace Members, so you will be added as a Workspace Guest [1].",
    );
    assert_eq!(j.verdict, Verdict::Supported, "{:?}", j.reasons);
    let j = judge(
        "Employees may telework two days a week.",
        "Employees may telework only two days a week [1].",
    );
    assert_eq!(j.verdict, Verdict::Supported, "{:?}", j.reasons);
    let j = judge(
        "Employees and contractors may telework two days a week.",
        "Only employees may telework two days a week [1].",
    );
    assert_eq!(reasons(&j), [r#"restriction: "only""#]);
}

/// WordNet synonyms match; antonyms (WordNet and the policy pairs) contradict, with
/// the two words as the reason; a negation on the claim's side cancels an antonym.
#[test]
fn synonyms_match_and_antonyms_contradict() {
    const SKETCH: &str = "You can get started with a trial version immediately. In order to upgrade to the full version, you'll need to request a license by emailing the design tool owner.";
    let j = judge(
        SKETCH,
        "You can begin with a trial version immediately [1].",
    );
    assert_eq!(j.verdict, Verdict::Supported, "{:?}", j.reasons);
    const PLUGINS: &str = "Figma plugins are optional for every design team.";
    let j = judge(
        PLUGINS,
        "Figma plugins are mandatory for every design team [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted);
    assert_eq!(reasons(&j)[0], r#"antonym: "mandatory" vs "optional""#);
    let j = judge(
        PLUGINS,
        "Figma plugins are not mandatory for every design team [1].",
    );
    assert_ne!(j.verdict, Verdict::Contradicted, "{:?}", j.reasons);
    const TRAVEL: &str = "Unused travel compensatory time is forfeited when you leave the agency.";
    let j = judge(
        TRAVEL,
        "Unused travel compensatory time is paid out when you leave the agency [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted);
    assert_eq!(reasons(&j)[0], r#"antonym: "paid" vs "forfeited""#);
    const AUDITS: &str = "The security team runs weekly audits of every account.";
    let j = judge(
        AUDITS,
        "The security team runs monthly audits of every account [1].",
    );
    assert_eq!(reasons(&j)[0], r#"antonym: "monthly" vs "weekly""#);
}

/// Another period for a repeated event, and order (before/after), contradict.
#[test]
fn periods_and_order_contradict() {
    const NEWSLETTER: &str = "Talent sends out a weekly TTS-wide email with all open roles.";
    let j = judge(
        NEWSLETTER,
        "Talent sends a TTS-wide email with all open roles once a month [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted);
    assert_eq!(reasons(&j)[0], r#"antonym: "once a month" vs "weekly""#);
    assert_eq!(
        judge(
            NEWSLETTER,
            "Talent sends a TTS-wide email with all open roles every week [1]."
        )
        .verdict,
        Verdict::Supported
    );
    const INTERVIEWS: &str =
        "All candidates receive a copy of the interview questions prior to their interview.";
    let j = judge(
        INTERVIEWS,
        "All candidates receive a copy of the interview questions after their interview [1].",
    );
    assert_eq!(j.verdict, Verdict::Contradicted);
    assert_eq!(reasons(&j)[0], r#"antonym: "after" vs "prior""#);
}
