use super::*;

#[test]
fn judge_batches_carry_context_and_stay_in_budget() {
    // Old, old, new, new, new with 10 tokens each.
    let b = judge_batches(&[false, false, true, true, true], &[10; 5], 40);
    assert_eq!(b, vec![1..5]);
    // A budget of 20 splits the new messages.
    let b = judge_batches(&[false, true, true, true], &[10; 4], 20);
    assert_eq!(b, vec![1..3, 3..4]);
    // A message over budget is judged alone.
    assert_eq!(judge_batches(&[true], &[500], 20), vec![0..1]);
    assert!(judge_batches(&[false, false], &[1, 1], 20).is_empty());
}

#[test]
fn message_hashes_are_stable_and_distinct() {
    let a = message_hash("s1", 0, Role::User, "hi");
    assert_eq!(a, message_hash("s1", 0, Role::User, "hi"));
    assert_ne!(a, message_hash("s1", 1, Role::User, "hi"));
    assert_ne!(a, message_hash("s2", 0, Role::User, "hi"));
    assert_ne!(a, message_hash("s1", 0, Role::Assistant, "hi"));
    assert_eq!(a.len(), 16);
}
