//! Everyday concepts: what lets "What's my dog's name?" find "I have a
//! golden retriever called Biscuit", and "What food do I like?" find
//! "我最喜欢的食物是饺子", with no embedder and no model.
//!
//! People ask about their own facts in other words than they told them:
//! the question names the category ("dog", "job", "food"), the fact the
//! instance ("retriever", "nurse", "饺子"). Each word of the lexicon below
//! stands for one concept; the analyzer's term of such a word (its stem,
//! or a CJK bigram or unigram) adds the concept's term to the document or
//! the query it is in, in both languages alike, so the two meet on it. A
//! concept is one more term to BM25: its IDF keeps a common one (food, in
//! a food blog) weak, and a word's own match still counts more than the
//! concept it shares with another.
//!
//! Approach and cost: the lexicon is analyzed once into a sorted table;
//! each new term of an index is looked up once (binary search), each query
//! term once. A model, when there is one, writes aliases of its own at
//! extraction time (`metadata.aliases`), which reach the same terms.

use std::sync::OnceLock;

use super::analyzer::{ascii_term, UNIGRAM};

/// Concept terms start with this, which no analyzed text holds.
pub const MARK: char = '\u{2}';

/// A concept's term (its name after [`MARK`]), then the words that
/// stand for it, English and Chinese, space-separated. A word in two lists
/// counts for the first.
const LEXICON: &[&str] = &[
    "\u{2}pet pet dog puppy cat kitten retriever labrador poodle terrier husky corgi hamster rabbit bunny \
     parrot budgie bird goldfish tortoise turtle vet 宠物 狗 猫 狗狗 猫咪 小狗 小猫 金毛 柯基 泰迪 兔子 仓鼠 \
     鹦鹉 鸟 八哥 金鱼 乌龟 兽医",
    "\u{2}job job work career profession occupation employer company office boss colleague coworker nurse \
     engineer developer programmer teacher lawyer chef baker accountant designer manager salary hired \
     工作 职业 上班 公司 同事 老板 护士 工程 程序 老师 教师 律师 厨师 会计 设计 经理 工资 医生",
    "\u{2}food food eat meal dish cuisine cook dinner lunch breakfast snack dessert pizza pasta sushi \
     dumpling noodle ramen rice burger curry salad steak chocolate cake vegetarian vegan restaurant coffee \
     tea beer wine 食物 吃 饭 菜 美食 饺子 面条 米饭 火锅 寿司 蛋糕 甜点 早餐 午饭 晚饭 餐厅 素食 包子 咖啡 \
     奶茶 喝",
    "\u{2}family family mother mom mum father dad parent sister brother sibling son daughter child kid wife \
     husband spouse married grandma grandmother grandpa grandfather aunt uncle cousin niece nephew baby \
     家人 家庭 妈妈 母亲 爸爸 父亲 父母 姐姐 妹妹 哥哥 弟弟 儿子 女儿 孩子 老婆 老公 妻子 丈夫 结婚 奶奶 \
     爷爷 祖母 祖父 外婆 外公 姥姥 叔叔 阿姨",
    "\u{2}home live home house apartment flat city town neighbourhood neighborhood hometown moved 住在 家乡 \
     城市 搬家 公寓 老家 房子",
    "\u{2}health health sick ill allergy allergic hospital medicine medication pill diabetes asthma \
     injury surgery pain headache migraine symptom therapy diagnosed doctor dentist 健康 生病 过敏 医院 药 \
     哮喘 手术 受伤 头疼 血压 体检",
    "\u{2}plan trip travel vacation holiday flight journey 打算 旅行 旅游 度假 出差 机票",
    "\u{2}sport hobby sport exercise marathon gym workout swim yoga hike cycling football soccer tennis \
     basketball climbing ski guitar piano violin photography 爱好 运动 跑步 马拉 健身 游泳 瑜伽 爬山 徒步 \
     足球 篮球 网球 滑雪 吉他 钢琴 摄影",
    "\u{2}date birthday born anniversary wedding 生日 出生 纪念 婚礼",
    "\u{2}study school university college study student degree exam graduate 学校 大学 学习 学生 专业 \
     考试 毕业",
    "\u{2}lang language speak fluent english spanish french german japanese chinese mandarin 语言 英语 \
     中文 法语 日语 德语",
    "\u{2}car car drive vehicle motorcycle 车 开车 汽车",
    "\u{2}name name named called nickname 名字 叫",
];

/// The concept term each lexicon term stands for, sorted by term.
fn table() -> &'static [(String, u8)] {
    static TABLE: OnceLock<Vec<(String, u8)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = Vec::new();
        for (n, entry) in LEXICON.iter().enumerate() {
            for word in entry.split(' ').skip(1).filter(|w| !w.is_empty()) {
                // The word's own term, as the analyzer makes it: a stem; a
                // CJK word as itself, one character as its unigram.
                let term = match word.chars().count() {
                    _ if word.is_ascii() => ascii_term(word),
                    1 => Some(format!("{UNIGRAM}{word}")),
                    _ => Some(word.to_string()),
                };
                table.extend(term.map(|t| (t, n as u8)));
            }
        }
        // First list wins: a stable sort keeps the earlier of two equal terms first.
        crate::order::sort_by(&mut table, |a, b| a.0.cmp(&b.0));
        table.dedup_by(|a, b| a.0 == b.0);
        table
    })
}

/// The concept term `term` (an analyzed term) stands for, if any.
pub fn concept_of(term: &str) -> Option<&'static str> {
    let table = table();
    let at = table.binary_search_by(|(t, _)| t.as_str().cmp(term)).ok()?;
    LEXICON[table[at].1 as usize].split(' ').next()
}

/// Whether `term` is a concept's term.
pub fn is_concept(term: &str) -> bool {
    term.starts_with(MARK)
}

/// A query's terms with the concepts they stand for added after them,
/// each once.
pub fn expand(mut terms: Vec<String>) -> Vec<String> {
    for i in 0..terms.len() {
        if let Some(c) = concept_of(&terms[i]) {
            if !terms.iter().any(|t| t == c) {
                terms.push(c.to_string());
            }
        }
    }
    terms
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::analyzer::analyze_query;

    fn concepts(text: &str) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = analyze_query(text).iter().filter_map(|t| concept_of(t)).collect();
        out.dedup();
        out
    }

    #[test]
    fn a_question_and_a_fact_in_other_words_share_a_concept() {
        assert_eq!(concepts("What's my dog's name?"), ["\u{2}pet", "\u{2}name"]);
        assert_eq!(concepts("I have a golden retriever called Biscuit"), ["\u{2}pet", "\u{2}name"]);
        assert_eq!(concepts("What's my job?"), ["\u{2}job"]);
        assert!(concepts("She works as a nurse").contains(&"\u{2}job"));
        assert!(concepts("What food do I like?").contains(&"\u{2}food"));
        assert!(concepts("我最喜欢的食物是饺子").contains(&"\u{2}food"));
        assert!(concepts("我养了一只猫").contains(&"\u{2}pet"));
        assert_eq!(concepts("The meeting ran late"), Vec::<&str>::new());
    }

    #[test]
    fn every_word_of_the_lexicon_has_a_term_and_the_first_list_wins() {
        for entry in LEXICON {
            let name = entry.split(' ').next().unwrap();
            assert!(is_concept(name) && name.len() > 1 && entry.split_whitespace().count() > 2, "{entry}");
        }
        // "work" is a job word; the table has no term twice.
        assert_eq!(concept_of("work"), Some("\u{2}job"));
        assert!(table().windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn expansion_appends_each_concept_once() {
        let terms = expand(analyze_query("dog puppy cat"));
        assert_eq!(terms.iter().filter(|t| is_concept(t)).count(), 1, "{terms:?}");
        assert_eq!(terms.last().map(String::as_str), Some("\u{2}pet"));
    }
}
