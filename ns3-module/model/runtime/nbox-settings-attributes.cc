#include "nbox-settings-attributes.h"

#include <cctype>
#include <optional>
#include <vector>

namespace ns3
{

std::string
NboxAttributeSpelling(nbox::coll::AlgorithmChoice choice)
{
    // The scenario's spelling in CamelCase: "halving-doubling" -> "HalvingDoubling".
    std::string spelling;
    bool upper = true;
    for (char c : nbox::coll::ToString(choice))
    {
        if (c == '-')
        {
            upper = true;
            continue;
        }
        spelling += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
        upper = false;
    }
    return spelling;
}

namespace
{

/*
 * The choices one operation allows. ns-3 3.37's EnumValue reads an unknown name as whatever
 * its checker's list holds past its end (in a release build, the list's size: 2 for the
 * all-to-all's two choices, which is kDirect), so its values here read names themselves and
 * refuse the ones the table does not allow.
 */
class NboxAlgorithmChecker : public EnumChecker
{
  public:
    explicit NboxAlgorithmChecker(std::string_view key)
        : m_allowed(nbox::coll::OperationChoicesOf(key).allowed)
    {
        bool first = true;
        for (nbox::coll::AlgorithmChoice choice : m_allowed)
        {
            if (first)
            {
                AddDefault(static_cast<int>(choice), NboxAttributeSpelling(choice));
            }
            else
            {
                Add(static_cast<int>(choice), NboxAttributeSpelling(choice));
            }
            first = false;
        }
    }

    /** The value of the allowed choice spelled `name`, or nothing. */
    std::optional<int>
    ValueOf(const std::string& name) const
    {
        for (nbox::coll::AlgorithmChoice choice : m_allowed)
        {
            if (NboxAttributeSpelling(choice) == name)
            {
                return static_cast<int>(choice);
            }
        }
        return std::nullopt;
    }

    Ptr<AttributeValue> Create() const override;

  private:
    std::vector<nbox::coll::AlgorithmChoice> m_allowed;
};

class NboxAlgorithmValue : public EnumValue
{
  public:
    using EnumValue::EnumValue;

    Ptr<AttributeValue>
    Copy() const override
    {
        return ns3::Create<NboxAlgorithmValue>(*this);
    }

    bool
    DeserializeFromString(std::string value, Ptr<const AttributeChecker> checker) override
    {
        const auto* algorithms = dynamic_cast<const NboxAlgorithmChecker*>(PeekPointer(checker));
        const std::optional<int> found
            = algorithms != nullptr ? algorithms->ValueOf(value) : std::nullopt;
        if (found)
        {
            Set(*found);
        }
        return found.has_value();
    }
};

Ptr<AttributeValue>
NboxAlgorithmChecker::Create() const
{
    return ns3::Create<NboxAlgorithmValue>();
}

} // namespace

Ptr<const AttributeChecker>
MakeNboxAlgorithmChecker(std::string_view key)
{
    return Ptr<const AttributeChecker>(new NboxAlgorithmChecker(key), false);
}

} // namespace ns3
